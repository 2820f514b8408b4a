// A function as a program in the MLIR text form of TFRT's corert dialect,
// which `loom run` and the program API execute: one corert.executeop per
// node on the "cpu" handler, stateful nodes chained in body order
// (corert.executeop.seq), captured tensors as corert.const_dense_tensor,
// calls as tfrt.call; a stateful callee takes and returns a chain. If,
// While and Case nodes are corert.cond, corert.while and tfrt.case, whose
// functions take and return a chain too.

#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "function/function_capture.h"
#include "function/function_internal.h"
#include "function/function_shapes.h"
#include "function/program_dtype.h"
#include "handlers/trace/trace_internal.h"
#include "loom/op_signature.h"

struct program_printer_t;

// The functions a control flow node runs.
typedef struct flow_functions_t {
  loom_function_t** fns;
  int32_t count;
} flow_functions_t;

typedef struct printer_t {
  struct program_printer_t* program;
  loom__text_t* text;  // the program's
  const loom_function_t* function;
  loom_op_registry_t* registry;
  const loom_op_def_t** defs;  // per node
  // Per node: the function it calls (retained), or NULL: an op.
  loom_function_t** callees;
  // Per node: an If's then and else branches, a While's cond and body, a
  // Case's branches (retained; the array owned), or none.
  struct flow_functions_t* flow;
  // The body's static shapes, noted after each node, or NULL.
  loom__function_shapes_t* shapes;
  // A stateful function the program calls, or one an If or a While runs:
  // it takes and returns a chain.
  bool threads_chain;
} printer_t;

// The functions a program holds: the called ones before their callers.
typedef struct program_printer_t {
  loom_context_t* context;
  loom_allocator_t allocator;
  loom_op_registry_t* registry;
  loom__text_t text;
  printer_t* functions;
  int32_t num_functions;
  int32_t capacity;
  // The calls being collected, to refuse recursion.
  const loom_function_t* visiting[LOOM_FUNCTION_MAX_CALL_DEPTH + 1];
  int32_t depth;
} program_printer_t;

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
  loom__text_append(p->text, "%s", spelling);
  return loom_ok_status();
}

static void print_double(printer_t* p, double value) {
  char number[40];
  snprintf(number, sizeof(number), "%.17g", value);
  // MLIR's float literals have a point or an exponent.
  bool is_float = strpbrk(number, ".eEni") != NULL;
  loom__text_append(p->text, "%s%s", number, is_float ? "" : ".0");
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
  loom__text_append(p->text, "dense<%s", shape->rank > 0 ? "[" : "");
  for (int64_t i = 0; i < n; ++i) {
    if (i) loom__text_append(p->text, ", ");
    if (dtype == LOOM_DTYPE_FLOAT) print_double(p, ((const float*)data)[i]);
    if (dtype == LOOM_DTYPE_DOUBLE) print_double(p, ((const double*)data)[i]);
    if (dtype == LOOM_DTYPE_INT32) {
      loom__text_append(p->text, "%d", ((const int32_t*)data)[i]);
    }
    if (dtype == LOOM_DTYPE_INT64) {
      loom__text_append(p->text, "%lld", (long long)((const int64_t*)data)[i]);
    }
  }
  loom__text_append(p->text, "%s> : tensor<", shape->rank > 0 ? "]" : "");
  const int64_t* dims = loom_shape_dims(shape);
  for (int32_t d = 0; d < shape->rank; ++d) {
    loom__text_append(p->text, "%lldx", (long long)dims[d]);
  }
  LOOM_RETURN_IF_ERROR(print_dtype(p, dtype, what));
  loom__text_append(p->text, ">");
  return loom_ok_status();
}

static loom_status_t print_attr(printer_t* p, const char* node,
                                const char* name,
                                const loom_attr_value_t* value) {
  char what[256];
  snprintf(what, sizeof(what), "node '%s', attr '%s'", node, name);
  loom__text_append(p->text, "%s = ", name);
  if (value->is_list) {
    // An empty list of any kind reads back as an empty list.
    if (value->count == 0) {
      loom__text_append(p->text, "[]");
      return loom_ok_status();
    }
    if (value->kind != LOOM_ATTR_KIND_I64 &&
        value->kind != LOOM_ATTR_KIND_DTYPE) {
      return unprintable(p, what, "a list of this kind");
    }
    loom__text_append(p->text, "[");
    for (int64_t i = 0; i < value->count; ++i) {
      if (i) loom__text_append(p->text, ", ");
      if (value->kind == LOOM_ATTR_KIND_I64) {
        loom__text_append(p->text, "%lld : i64",
                          (long long)((const int64_t*)value->u.list)[i]);
      } else {
        LOOM_RETURN_IF_ERROR(
            print_dtype(p, ((const loom_dtype_t*)value->u.list)[i], what));
      }
    }
    loom__text_append(p->text, "]");
    return loom_ok_status();
  }
  switch (value->kind) {
    case LOOM_ATTR_KIND_BOOL:
      loom__text_append(p->text, "%s", value->u.b ? "true" : "false");
      return loom_ok_status();
    case LOOM_ATTR_KIND_I32:
      loom__text_append(p->text, "%d : i32", value->u.i32);
      return loom_ok_status();
    case LOOM_ATTR_KIND_I64:
      loom__text_append(p->text, "%lld : i64", (long long)value->u.i64);
      return loom_ok_status();
    case LOOM_ATTR_KIND_F32:
      print_double(p, value->u.f32);
      loom__text_append(p->text, " : f32");
      return loom_ok_status();
    case LOOM_ATTR_KIND_F64:
      print_double(p, value->u.f64);
      loom__text_append(p->text, " : f64");
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
      loom__text_append(p->text, "\"%.*s\"", (int)value->u.string.size,
                        value->u.string.data);
      return loom_ok_status();
    case LOOM_ATTR_KIND_SHAPE:
      if (value->u.shape.rank < 0) {
        loom__text_append(p->text, "#corert.shape<*>");
        return loom_ok_status();
      }
      loom__text_append(p->text, "#corert.shape<");
      for (int32_t d = 0; d < value->u.shape.rank; ++d) {
        int64_t dim = value->u.shape.dims[d];
        if (d) loom__text_append(p->text, "x");
        if (dim < 0) {
          loom__text_append(p->text, "?");
        } else {
          loom__text_append(p->text, "%lld", (long long)dim);
        }
      }
      loom__text_append(p->text, ">");
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
      loom__text_append(p->text, "%%arg%d", ref->input);
    } else {
      loom__text_append(p->text, "%%cap%d", ref->input - visible);
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
    loom__text_append(p->text, "%s%%n%d_%d", i > start ? ", " : "", ref->node,
                      i);
  }
  return loom_ok_status();
}

// "tensor<3x?xf32>" ("tensor<*xf32>": unknown rank); false when the dtype
// has no spelling.
static bool print_tensor_type(printer_t* p, loom_dtype_t dtype,
                              const loom_shape_t* shape) {
  const char* spelling = loom__program_dtype_spelling(dtype);
  if (!spelling) return false;
  loom__text_append(p->text, "tensor<");
  if (shape->rank < 0) loom__text_append(p->text, "*x");
  const int64_t* dims = loom_shape_dims(shape);
  for (int32_t d = 0; d < shape->rank; ++d) {
    if (dims[d] < 0) {
      loom__text_append(p->text, "?x");
    } else {
      loom__text_append(p->text, "%lldx", (long long)dims[d]);
    }
  }
  loom__text_append(p->text, "%s>", spelling);
  return true;
}

// A comment with the types of the node's results as far as known before
// the function runs ("// tensor<3x4xf32>"), so that a reader sees the
// shapes the trace inferred.
static void print_result_types(printer_t* p, int32_t index, int32_t count) {
  if (!p->shapes || count <= 0) return;
  const loom__function_static_value_t* values = NULL;
  if (loom__function_shapes_node(p->shapes, index, &values) != count) return;
  for (int32_t i = 0; i < count; ++i) {
    if (!loom__program_dtype_spelling(values[i].dtype)) return;
  }
  loom__text_append(p->text, "  //");
  for (int32_t i = 0; i < count; ++i) {
    loom__text_append(p->text, "%s", i ? ", " : " ");
    print_tensor_type(p, values[i].dtype, &values[i].shape);
  }
}

// Whether `function`, one of the program's, takes and returns a chain.
static bool threads_chain(const struct program_printer_t* pp,
                          const loom_function_t* function);

static void print_handle_types(printer_t* p, bool chain, int32_t count) {
  loom__text_append(p->text, "(%s", chain ? "!tfrt.chain" : "");
  for (int32_t i = 0; i < count; ++i) {
    loom__text_append(p->text, "%s!corert.tensorhandle",
                      i || chain ? ", " : "");
  }
  loom__text_append(p->text, ")");
}

// A Case's index as the i32 tfrt.case takes, "%k3_index": TensorFlow's
// Case runs the last branch for an index out of range, tfrt.case fails, so
// the index is clamped first (SelectV2 of index in [0, n) against n - 1).
static loom_status_t print_case_index(printer_t* p, int32_t index,
                                      int32_t branches) {
  const loom__function_node_t* node = &p->function->nodes[index];
  static const char* const kConstants[3] = {"zero", "n", "last"};
  int32_t values[3] = {0, branches, branches - 1};
  for (int32_t c = 0; c < 3; ++c) {
    loom__text_append(p->text,
                      "  %%k%d_%s = corert.const_dense_tensor dense<%d> : "
                      "tensor<i32>\n",
                      index, kConstants[c], values[c]);
  }
  loom__text_append(p->text,
                    "  %%k%d_ge = corert.executeop(%%cpu) \"tf.GreaterEqual\"(",
                    index);
  LOOM_RETURN_IF_ERROR(print_ref(p, &node->inputs[0]));
  loom__text_append(p->text,
                    ", %%k%d_zero) : 1\n"
                    "  %%k%d_lt = corert.executeop(%%cpu) \"tf.Less\"(",
                    index, index);
  LOOM_RETURN_IF_ERROR(print_ref(p, &node->inputs[0]));
  loom__text_append(
      p->text,
      ", %%k%d_n) : 1\n"
      "  %%k%d_ok = corert.executeop(%%cpu) \"tf.LogicalAnd\"(%%k%d_ge, "
      "%%k%d_lt) : 1\n"
      "  %%k%d_clamped = corert.executeop(%%cpu) \"tf.SelectV2\"(%%k%d_ok, ",
      index, index, index, index, index, index);
  LOOM_RETURN_IF_ERROR(print_ref(p, &node->inputs[0]));
  loom__text_append(p->text,
                    ", %%k%d_last) : 1\n"
                    "  %%k%d_index = corert.tensorhandle_to_int32 "
                    "%%k%d_clamped\n",
                    index, index, index);
  return loom_ok_status();
}

// An If node as corert.cond of its branches, a While node as corert.while
// of its cond and body, a Case node as tfrt.case of its branches on its
// clamped index: "%ch2, %n3_0 = corert.cond %arg0 @then @else (%ch1,
// %arg1) : (!corert.tensorhandle) -> (!corert.tensorhandle)". Each takes
// and returns the chain.
static loom_status_t print_flow(printer_t* p, int32_t index, int32_t* chain) {
  const loom__function_node_t* node = &p->function->nodes[index];
  const flow_functions_t* flow = &p->flow[index];
  loom_function_t* const* fns = flow->fns;
  bool is_if = strstr(node->op, "If") != NULL;
  bool is_case = strstr(node->op, "Case") != NULL;
  bool is_while = !is_if && !is_case;
  int32_t count = is_while ? fns[1]->num_outputs : fns[0]->num_outputs;
  int32_t arity = fns[0]->num_inputs - loom__function_num_captures(fns[0]);
  if (is_case) {
    LOOM_RETURN_IF_ERROR(print_case_index(p, index, flow->count));
  }
  loom__text_append(p->text, "  %%ch%d", *chain + 1);
  for (int32_t i = 0; i < count; ++i) {
    loom__text_append(p->text, ", %%n%d_%d", index, i);
  }
  if (is_case) {
    loom__text_append(p->text, " = tfrt.case %%k%d_index [", index);
    for (int32_t b = 0; b < flow->count; ++b) {
      loom__text_append(p->text, "%s@%s", b ? ", " : "", fns[b]->name);
    }
    loom__text_append(p->text, "] (%%ch%d", *chain);
  } else {
    loom__text_append(p->text, " = corert.%s ", is_if ? "cond" : "while");
    if (is_if) {
      LOOM_RETURN_IF_ERROR(print_ref(p, &node->inputs[0]));
      loom__text_append(p->text, " ");
    }
    loom__text_append(p->text, "@%s @%s (%%ch%d", fns[0]->name, fns[1]->name,
                      *chain);
  }
  for (int32_t i = is_while ? 0 : 1; i < node->num_inputs; ++i) {
    loom__text_append(p->text, ", ");
    LOOM_RETURN_IF_ERROR(print_ref(p, &node->inputs[i]));
  }
  loom__text_append(p->text, ") : ");
  print_handle_types(p, is_case, arity);
  loom__text_append(p->text, " -> ");
  print_handle_types(p, is_case, count);
  ++*chain;
  print_result_types(p, index, count);
  loom__text_append(p->text, "\n");
  return loom_ok_status();
}

// A node calling a function of the program: tfrt.call of its func.func
// (its captured values are its own constants). A stateful callee takes the
// caller's chain first and returns the chain its stateful ops end with,
// which the caller's later stateful ops continue.
static loom_status_t print_call(printer_t* p, int32_t index, int32_t* chain) {
  const loom__function_node_t* node = &p->function->nodes[index];
  const loom_function_t* callee = p->callees[index];
  bool seq = threads_chain(p->program, callee);
  int32_t count = callee->num_outputs;
  int32_t arity = callee->num_inputs - loom__function_num_captures(callee);
  int32_t num_types = count + (seq ? 1 : 0);
  loom__text_append(p->text, "  ");
  if (seq) {
    loom__text_append(p->text, "%%ch%d%s", *chain + 1, count ? ", " : "");
  }
  for (int32_t i = 0; i < count; ++i) {
    loom__text_append(p->text, "%s%%n%d_%d", i ? ", " : "", index, i);
  }
  loom__text_append(p->text, " = tfrt.call @%s(", callee->name);
  if (seq) loom__text_append(p->text, "%%ch%d%s", *chain, arity ? ", " : "");
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    if (i) loom__text_append(p->text, ", ");
    LOOM_RETURN_IF_ERROR(print_ref(p, &node->inputs[i]));
  }
  loom__text_append(p->text, ") : (");
  if (seq) loom__text_append(p->text, "!tfrt.chain%s", arity ? ", " : "");
  for (int32_t i = 0; i < arity; ++i) {
    loom__text_append(p->text, "%s!corert.tensorhandle", i ? ", " : "");
  }
  loom__text_append(p->text, ") -> %s", num_types > 1 ? "(" : "");
  if (seq) loom__text_append(p->text, "!tfrt.chain%s", count ? ", " : "");
  for (int32_t i = 0; i < count; ++i) {
    loom__text_append(p->text, "%s!corert.tensorhandle", i ? ", " : "");
  }
  loom__text_append(p->text, "%s", num_types > 1 ? ")" : "");
  if (seq) ++*chain;
  print_result_types(p, index, count);
  loom__text_append(p->text, "\n");
  return loom_ok_status();
}

// The number of results of `def` with `attrs` (their types may be left to
// inference: a built function's nodes need not set them).
static loom_status_t count_results(const loom_op_def_t* def,
                                   const loom_op_attrs_t* attrs,
                                   int32_t* out_count) {
  *out_count = 0;
  if (def->num_outputs == 0) return loom_ok_status();
  int32_t start = 0;
  return loom_op_def_arg_range(def, attrs, true,
                               def->outputs[def->num_outputs - 1].name, &start,
                               out_count);
}

static loom_status_t print_node(printer_t* p, int32_t index, int32_t* chain) {
  if (p->callees[index]) return print_call(p, index, chain);
  if (p->flow[index].count) return print_flow(p, index, chain);
  const loom__function_node_t* node = &p->function->nodes[index];
  const loom_op_def_t* def = p->defs[index];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(count_results(def, &node->attrs, &count));
  loom__text_append(p->text, "  ");
  bool seq = def->is_stateful;
  if (seq)
    loom__text_append(p->text, "%%ch%d%s", *chain + 1, count ? ", " : "");
  for (int32_t i = 0; i < count; ++i) {
    loom__text_append(p->text, "%s%%n%d_%d", i ? ", " : "", index, i);
  }
  if (seq || count) loom__text_append(p->text, " = ");
  if (seq) {
    loom__text_append(p->text, "corert.executeop.seq(%%cpu, %%ch%d)", *chain);
    ++*chain;
  } else {
    loom__text_append(p->text, "corert.executeop(%%cpu)");
  }
  loom__text_append(p->text, " \"tf.%s\"(", node->op);
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    if (i) loom__text_append(p->text, ", ");
    LOOM_RETURN_IF_ERROR(print_ref(p, &node->inputs[i]));
  }
  loom__text_append(p->text, ")");
  size_t num_attrs = loom_op_attrs_count(&node->attrs);
  int32_t printed = 0;
  for (size_t a = 0; a < num_attrs; ++a) {
    const char* name = NULL;
    loom_attr_value_t value;
    if (!loom_op_attrs_entry_at(&node->attrs, a, &name, &value)) continue;
    // An empty list reads back as a list of ints; one that is the op's
    // default (VarHandleOp's allowed_devices) is left to the default,
    // which has the op's kind.
    loom_attr_value_t fallback;
    if (value.is_list && value.count == 0 && def->defaults &&
        loom_op_attrs_get(def->defaults, name, &fallback) && fallback.is_list &&
        fallback.count == 0) {
      continue;
    }
    loom__text_append(p->text, "%s", printed++ ? ", " : " {");
    LOOM_RETURN_IF_ERROR(print_attr(p, node->name, name, &value));
  }
  loom__text_append(p->text, "%s : %d", printed ? "}" : "", count);
  print_result_types(p, index, count);
  loom__text_append(p->text, "\n");
  return loom_ok_status();
}

// A stateful function the program calls takes the chain its stateful ops
// start from as its first argument (%ch0) and returns the one they end
// with first, as TFRT's functions do, so that its caller orders them with
// its own; the others (the function printed, which `loom run` runs when it
// has no parameters) start from a new chain.
static loom_status_t print_function(printer_t* p) {
  const loom_function_t* f = p->function;
  bool chained = p->threads_chain;
  if (f->num_outputs == 0 && !chained) {
    return unprintable(p, "its outputs", "a function without outputs");
  }
  int32_t num_captures = loom__function_num_captures(f);
  int32_t visible = f->num_inputs - num_captures;
  loom__text_append(p->text, "func.func @%s(", f->name);
  if (chained) {
    loom__text_append(p->text, "%%ch0: !tfrt.chain%s", visible ? ", " : "");
  }
  for (int32_t i = 0; i < visible; ++i) {
    if (f->inputs[i].type_attr) {
      return unprintable(p, "its inputs", "an input typed by an attr");
    }
    loom__text_append(p->text, "%s%%arg%d: !corert.tensorhandle", i ? ", " : "",
                      i);
  }
  loom__text_append(p->text, ") -> (");
  if (chained) {
    loom__text_append(p->text, "!tfrt.chain%s", f->num_outputs ? ", " : "");
  }
  for (int32_t o = 0; o < f->num_outputs; ++o) {
    loom__text_append(p->text, "%s!corert.tensorhandle", o ? ", " : "");
  }
  loom__text_append(p->text, ") {\n%s",
                    chained ? "" : "  %ch0 = tfrt.new.chain\n");
  loom__text_append(p->text, "  %%cpu = corert.get_op_handler %%ch0 \"cpu\"\n");
  for (int32_t c = 0; c < num_captures; ++c) {
    loom_tensor_handle_t* handle = f->captures->handles[c];
    loom_tensor_t* tensor = NULL;
    char what[64];
    snprintf(what, sizeof(what), "captured input %d", c);
    if (loom_tensor_handle_dtype(handle) == LOOM_DTYPE_RESOURCE) {
      return unprintable(p, what, "a resource (a variable's handle)");
    }
    LOOM_RETURN_IF_ERROR(loom_tensor_handle_resolve(handle, &tensor));
    loom__text_append(p->text, "  %%cap%d = corert.const_dense_tensor ", c);
    loom_status_t status = print_tensor(p, tensor, what);
    loom_tensor_release(tensor);
    LOOM_RETURN_IF_ERROR(status);
    loom__text_append(p->text, "\n");
  }
  int32_t chain = 0;
  for (int32_t i = 0; i < f->num_nodes; ++i) {
    LOOM_RETURN_IF_ERROR(print_node(p, f->order[i], &chain));
  }
  loom__text_append(p->text, "  tfrt.return ");
  if (chained) {
    loom__text_append(p->text, "%%ch%d%s", chain, f->num_outputs ? ", " : "");
  }
  for (int32_t o = 0; o < f->num_outputs; ++o) {
    if (o) loom__text_append(p->text, ", ");
    LOOM_RETURN_IF_ERROR(print_ref(p, &f->sources[o]));
  }
  loom__text_append(p->text, " : ");
  if (chained) {
    loom__text_append(p->text, "!tfrt.chain%s", f->num_outputs ? ", " : "");
  }
  for (int32_t o = 0; o < f->num_outputs; ++o) {
    loom__text_append(p->text, "%s!corert.tensorhandle", o ? ", " : "");
  }
  loom__text_append(p->text, "\n}\n");
  return loom_ok_status();
}

// The body's shapes for the function's declared input shapes; *out NULL
// when they cannot be inferred.
static loom_status_t infer_declared_shapes(loom_context_t* context,
                                           const loom_function_t* function,
                                           loom_allocator_t allocator,
                                           loom__function_shapes_t** out) {
  *out = NULL;
  int32_t visible =
      function->num_inputs - loom__function_num_captures(function);
  loom__function_static_value_t* inputs = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(*inputs) * ((size_t)visible + 1), (void**)&inputs));
  for (int32_t i = 0; i < visible; ++i) {
    const loom__function_arg_t* arg = &function->inputs[i];
    inputs[i] = (loom__function_static_value_t){
        .dtype = arg->dtype,
        .shape = arg->has_shape ? arg->shape : loom_shape_unknown(),
        .handle_data = {.dtype = LOOM_DTYPE_INVALID,
                        .shape = loom_shape_unknown()},
    };
  }
  loom_status_t status =
      loom__function_shapes_infer(context, function, inputs, visible, out);
  loom_allocator_free(allocator, inputs);
  // A body whose shape functions fail prints all the same (without them):
  // printing is not calling.
  loom_status_free(status);
  return loom_ok_status();
}

static void free_printer(loom_allocator_t allocator, printer_t* p) {
  for (int32_t i = 0; p->callees && i < p->function->num_nodes; ++i) {
    loom_function_release(p->callees[i]);
  }
  for (int32_t i = 0; p->flow && i < p->function->num_nodes; ++i) {
    for (int32_t b = 0; b < p->flow[i].count; ++b) {
      loom_function_release(p->flow[i].fns[b]);
    }
    loom_allocator_free(allocator, p->flow[i].fns);
  }
  loom_allocator_free(allocator, p->flow);
  loom_allocator_free(allocator, p->callees);
  loom_allocator_free(allocator, p->defs);
  loom__function_shapes_destroy(p->shapes);
}

static bool threads_chain(const program_printer_t* pp,
                          const loom_function_t* function) {
  for (int32_t i = 0; i < pp->num_functions; ++i) {
    if (pp->functions[i].function == function) {
      return pp->functions[i].threads_chain;
    }
  }
  return function->stateful;
}

static loom_status_t collect(program_printer_t* pp,
                             const loom_function_t* function, bool chained);

// The function attr `value` (or a list's element) names, found in the
// context and collected as a function taking a chain: fns[k].
static loom_status_t collect_flow_function(program_printer_t* pp, printer_t* p,
                                           const char* what,
                                           const loom_attr_value_t* value,
                                           loom_function_t** out_function) {
  char name[256];
  if (value->kind != LOOM_ATTR_KIND_FUNC || value->is_list ||
      value->u.string.size >= sizeof(name)) {
    return unprintable(p, what, "a control flow node without its functions");
  }
  memcpy(name, value->u.string.data, value->u.string.size);
  name[value->u.string.size] = '\0';
  loom_status_t found =
      loom_context_find_function(pp->context, name, out_function);
  if (found) {
    loom_status_free(found);
    return unprintable(p, what,
                       "a control flow node whose function is not in the "
                       "context");
  }
  return collect(pp, *out_function, true);
}

// The functions node `index` of `p` runs as an If, a While or a Case (none
// for other nodes), collected as functions that take a chain.
static loom_status_t collect_flow(program_printer_t* pp, printer_t* p,
                                  int32_t index) {
  const loom__function_node_t* node = &p->function->nodes[index];
  char what[300];
  snprintf(what, sizeof(what), "node '%s'", node->name);
  static const char* const kIf[2] = {"then_branch", "else_branch"};
  static const char* const kWhile[2] = {"cond", "body"};
  const char* const* attrs = NULL;
  bool is_case = false;
  if (strcmp(node->op, "If") == 0 || strcmp(node->op, "StatelessIf") == 0) {
    attrs = kIf;
  } else if (strcmp(node->op, "While") == 0 ||
             strcmp(node->op, "StatelessWhile") == 0) {
    attrs = kWhile;
  } else if (strcmp(node->op, "Case") == 0 ||
             strcmp(node->op, "StatelessCase") == 0) {
    is_case = true;
  } else {
    return loom_ok_status();
  }
  loom_attr_value_t list;
  int32_t count = 2;
  if (is_case) {
    if (!loom_op_attrs_get(&node->attrs, "branches", &list) || !list.is_list ||
        list.count < 1) {
      return unprintable(p, what, "a control flow node without its functions");
    }
    count = (int32_t)list.count;
  }
  flow_functions_t* flow = &p->flow[index];
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      pp->allocator, sizeof(*flow->fns) * (size_t)count, (void**)&flow->fns));
  flow->count = count;
  for (int32_t k = 0; k < count; ++k) {
    loom_attr_value_t value;
    if (is_case) {
      LOOM_RETURN_IF_ERROR(loom_attr_value_list_element(&list, k, &value));
    } else if (!loom_op_attrs_get(&node->attrs, attrs[k], &value)) {
      return unprintable(p, what, "a control flow node without its functions");
    }
    LOOM_RETURN_IF_ERROR(
        collect_flow_function(pp, p, what, &value, &flow->fns[k]));
  }
  return loom_ok_status();
}

// Adds `function` to the program after the functions it calls (each
// function once); `chained`: it takes and returns a chain (an If or a
// While runs it).
static loom_status_t collect(program_printer_t* pp,
                             const loom_function_t* function, bool chained) {
  for (int32_t i = 0; i < pp->num_functions; ++i) {
    if (pp->functions[i].function == function) {
      pp->functions[i].threads_chain |= chained;
      return loom_ok_status();
    }
  }
  printer_t p = {
      .program = pp,
      .text = &pp->text,
      .function = function,
      .registry = pp->registry,
      // The function printed is no callee: it cannot call itself.
      .threads_chain = (function->stateful && pp->depth > 0) || chained,
  };
  for (int32_t i = 0; i < pp->depth; ++i) {
    if (pp->visiting[i] == function) {
      return unprintable(&p, "its body", "a recursive call");
    }
  }
  if (pp->depth >= LOOM_FUNCTION_MAX_CALL_DEPTH) {
    return unprintable(&p, "its body", "calls nested this deep");
  }
  size_t slots = (size_t)function->num_nodes + 1;
  loom_status_t status = loom_allocator_calloc(
      pp->allocator, sizeof(*p.defs) * slots, (void**)&p.defs);
  if (!status) {
    status = loom_allocator_calloc(pp->allocator, sizeof(*p.callees) * slots,
                                   (void**)&p.callees);
  }
  if (!status) {
    status = loom_allocator_calloc(pp->allocator, sizeof(*p.flow) * slots,
                                   (void**)&p.flow);
  }
  pp->visiting[pp->depth++] = function;
  for (int32_t i = 0; !status && i < function->num_nodes; ++i) {
    const loom__function_node_t* node = &function->nodes[i];
    p.defs[i] = loom_op_registry_find(p.registry, node->op);
    if (p.defs[i]) {
      status = collect_flow(pp, &p, i);
      continue;
    }
    loom_status_t found =
        loom_context_find_function(pp->context, node->op, &p.callees[i]);
    if (found) {
      loom_status_free(found);
      status = unprintable(&p, node->name,
                           "a node that is neither a registered op nor a "
                           "function of the context");
    } else {
      p.defs[i] = loom_function_signature(p.callees[i]);
      status = collect(pp, p.callees[i], false);
    }
  }
  --pp->depth;
  // The shapes each node's results have for the declared input shapes
  // (best effort: a body that cannot be inferred prints without them).
  if (!status) {
    status =
        infer_declared_shapes(pp->context, function, pp->allocator, &p.shapes);
  }
  if (!status && pp->num_functions == pp->capacity) {
    int32_t capacity = pp->capacity ? 2 * pp->capacity : 4;
    printer_t* grown = NULL;
    status = loom_allocator_calloc(
        pp->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown);
    if (!status) {
      if (pp->num_functions) {
        memcpy(grown, pp->functions,
               sizeof(*grown) * (size_t)pp->num_functions);
      }
      loom_allocator_free(pp->allocator, pp->functions);
      pp->functions = grown;
      pp->capacity = capacity;
    }
  }
  if (status) {
    free_printer(pp->allocator, &p);
    return status;
  }
  pp->functions[pp->num_functions++] = p;
  return loom_ok_status();
}

static loom_status_t print_all(program_printer_t* pp) {
  for (int32_t i = 0; i < pp->num_functions; ++i) {
    if (i) loom__text_append(&pp->text, "\n");
    LOOM_RETURN_IF_ERROR(print_function(&pp->functions[i]));
  }
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
  program_printer_t* pp = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*pp), (void**)&pp));
  pp->context = context;
  pp->allocator = allocator;
  pp->registry = loom_runtime_ops(loom_context_runtime(context));
  loom_status_t status = collect(pp, function, false);
  // Measured first, then written.
  if (!status) status = print_all(pp);
  char* text = NULL;
  if (!status) {
    status =
        loom_allocator_malloc(allocator, pp->text.length + 1, (void**)&text);
  }
  if (!status) {
    size_t length = pp->text.length;
    pp->text = (loom__text_t){.buffer = text, .capacity = length + 1};
    status = print_all(pp);
  }
  size_t length = pp->text.length;
  for (int32_t i = 0; i < pp->num_functions; ++i) {
    free_printer(allocator, &pp->functions[i]);
  }
  loom_allocator_free(allocator, pp->functions);
  loom_allocator_free(allocator, pp);
  if (status) {
    loom_allocator_free(allocator, text);
    return status;
  }
  *out_text = text;
  if (out_size) *out_size = length;
  return loom_ok_status();
}
