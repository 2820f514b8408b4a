// TensorFlow's serialized functions in the eager C API:
// TFE_ContextAddFunctionDef with FunctionDefs encoded by protobuf-c here and
// by Python's protobuf (tests/compat/function_def_bytes.py: a FunctionDef as
// TensorFlow serializes one), TF_FunctionImportFunctionDef /
// TFE_ContextAddFunction / TF_FunctionToFunctionDef, calls by name and
// through (Stateful)PartitionedCall with TFE_OpSetAttrFunctionName and
// TFE_OpSetAttrFunction, synchronous and asynchronous, If and Case naming
// FunctionDefs, control outputs (control_ret: an AssignVariableOp, a
// stateless node a planned call keeps), and the errors. List arguments:
// test_eager_function_def_lists.c.
//
// Reference values from NumPy (float32): x = [1.5, -2, 0.5],
// y = [0.25, 4, -3]; x*y+x = [1.875, -10, -1]; x*2 = [3, -4, 1];
// y+x = [1.75, 2, -2.5].

#include <stdio.h>
#include <sys/wait.h>

#include "eager_test_util.h"
#include "function_def_builder.h"
#include "loom/function.h"
#include "tensorflow/c/c_api.h"
#include "tf_framework.pb-c.h"

static const float kX[3] = {1.5f, -2, 0.5f};
static const float kY[3] = {0.25f, 4, -3};
static const float kF[3] = {1.875f, -10, -1};
static const int64_t kDims[1] = {3};

//===----------------------------------------------------------------------===//
// FunctionDefs made with protobuf-c
//===----------------------------------------------------------------------===//

typedef struct node_t {
  Tensorflow__NodeDef node;
  Tensorflow__NodeDef__AttrEntry entry;
  Tensorflow__NodeDef__AttrEntry* entries[1];
  Tensorflow__AttrValue value;
  char* inputs[2];
} node_t;

// A node with one attr: T = $T (placeholder) or T = float.
static void make_node(node_t* n, const char* name, const char* op,
                      const char* a, const char* b, bool placeholder) {
  tensorflow__node_def__init(&n->node);
  tensorflow__node_def__attr_entry__init(&n->entry);
  tensorflow__attr_value__init(&n->value);
  n->node.name = (char*)name;
  n->node.op = (char*)op;
  n->inputs[0] = (char*)a;
  n->inputs[1] = (char*)b;
  n->node.input = n->inputs;
  n->node.n_input = b ? 2 : 1;
  if (placeholder) {
    n->value.value_case = TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER;
    n->value.placeholder = "T";
  } else {
    n->value.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    n->value.type = TF_FLOAT;
  }
  n->entry.key = "T";
  n->entry.value = &n->value;
  n->entries[0] = &n->entry;
  n->node.attr = n->entries;
  n->node.n_attr = 1;
}

// poly(x: T, y: T) -> r: T, T in {float, double}: x * y + x, with the
// nodes' T given as the placeholder "$T". `ret_key` names the output in
// `ret` (not "r": an output without a source).
static uint8_t* poly_def(const char* name, const char* ret_key,
                         const char* add_input, size_t* out_size) {
  Tensorflow__OpDef signature;
  tensorflow__op_def__init(&signature);
  signature.name = (char*)name;
  Tensorflow__OpDef__ArgDef x, y, r;
  Tensorflow__OpDef__ArgDef* inputs[2] = {&x, &y};
  Tensorflow__OpDef__ArgDef* outputs[1] = {&r};
  tensorflow__op_def__arg_def__init(&x);
  tensorflow__op_def__arg_def__init(&y);
  tensorflow__op_def__arg_def__init(&r);
  x.name = "x";
  y.name = "y";
  r.name = "r";
  x.type_attr = y.type_attr = r.type_attr = "T";
  signature.input_arg = inputs;
  signature.n_input_arg = 2;
  signature.output_arg = outputs;
  signature.n_output_arg = 1;
  Tensorflow__OpDef__AttrDef t;
  Tensorflow__OpDef__AttrDef* attrs[1] = {&t};
  tensorflow__op_def__attr_def__init(&t);
  t.name = "T";
  t.type = "type";
  Tensorflow__AttrValue allowed;
  Tensorflow__AttrValue__ListValue list;
  tensorflow__attr_value__init(&allowed);
  tensorflow__attr_value__list_value__init(&list);
  int32_t types[2] = {TF_FLOAT, TF_DOUBLE};
  list.type = types;
  list.n_type = 2;
  allowed.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
  allowed.list = &list;
  t.allowed_values = &allowed;
  signature.attr = attrs;
  signature.n_attr = 1;

  node_t mul, add;
  make_node(&mul, "mul", "Mul", "x", "y", true);
  make_node(&add, "add", "AddV2", add_input, "x", true);
  Tensorflow__NodeDef* nodes[2] = {&mul.node, &add.node};
  Tensorflow__FunctionDef__RetEntry ret;
  Tensorflow__FunctionDef__RetEntry* rets[1] = {&ret};
  tensorflow__function_def__ret_entry__init(&ret);
  ret.key = (char*)ret_key;
  ret.value = "add:z:0";
  Tensorflow__FunctionDef def;
  tensorflow__function_def__init(&def);
  def.signature = &signature;
  def.node_def = nodes;
  def.n_node_def = 2;
  def.ret = rets;
  def.n_ret = 1;
  *out_size = tensorflow__function_def__get_packed_size(&def);
  uint8_t* bytes = malloc(*out_size);
  tensorflow__function_def__pack(&def, bytes);
  return bytes;
}

static void add_poly(TFE_Context* ctx, const char* name, TF_Status* status) {
  size_t size = 0;
  uint8_t* bytes = poly_def(name, "r", "mul:z:0", &size);
  TFE_ContextAddFunctionDef(ctx, (const char*)bytes, size, status);
  free(bytes);
}

// Calls `op_name` (a function, or a call op of function `f`) on x and y and
// checks the result against kF.
static void call_and_check(TFE_Context* ctx, const char* op_name, const char* f,
                           bool f_as_function) {
  TF_Status* status = TF_NewStatus();
  TFE_TensorHandle* x = float_handle(ctx, kDims, 1, kX);
  TFE_TensorHandle* y = float_handle(ctx, kDims, 1, kY);
  TFE_Op* op = binary_op(ctx, op_name, x, y);
  if (f && f_as_function) {
    TFE_Op* function = TFE_NewOp(ctx, f, status);
    ASSERT_TF_OK(status);
    TFE_OpSetAttrFunction(op, "f", function);
    TFE_DeleteOp(function);
  } else if (f) {
    TFE_OpSetAttrFunctionName(op, "f", f, strlen(f));
  }
  TFE_TensorHandle* r = NULL;
  int n = 1;
  TFE_Execute(op, &r, &n, status);
  ASSERT_TF_OK(status);
  assert_int_equal(n, 1);
  float values[3];
  read_floats(r, values, 3);
  for (int i = 0; i < 3; ++i) assert_true(values[i] == kF[i]);
  TFE_DeleteTensorHandle(r);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(x);
  TFE_DeleteTensorHandle(y);
  TF_DeleteStatus(status);
}

static void function_defs_from_protobuf_c(void** state) {
  eager_fixture_t* f = *state;
  add_poly(f->ctx, "poly", f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_ContextHasFunction(f->ctx, "poly"), 1);
  unsigned char is_list = 1;
  assert_int_equal(
      TFE_OpNameGetAttrType(f->ctx, "poly", "T", &is_list, f->status),
      TF_ATTR_TYPE);
  ASSERT_TF_OK(f->status);
  assert_int_equal(is_list, 0);
  call_and_check(f->ctx, "poly", NULL, false);
  call_and_check(f->ctx, "PartitionedCall", "poly", false);
  call_and_check(f->ctx, "StatefulPartitionedCall", "poly", true);
  TFE_ContextRemoveFunction(f->ctx, "poly", f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_ContextHasFunction(f->ctx, "poly"), 0);
  TFE_ContextAsyncWait(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
}

// twice(x: float) -> r: float = x * two, `two` a Const node whose value is
// a TensorProto of one float_val (how TensorFlow writes small constants).
static void const_nodes_decode_tensor_protos(void** state) {
  eager_fixture_t* f = *state;
  Tensorflow__OpDef signature;
  tensorflow__op_def__init(&signature);
  signature.name = "twice";
  Tensorflow__OpDef__ArgDef x, r;
  Tensorflow__OpDef__ArgDef* inputs[1] = {&x};
  Tensorflow__OpDef__ArgDef* outputs[1] = {&r};
  tensorflow__op_def__arg_def__init(&x);
  tensorflow__op_def__arg_def__init(&r);
  x.name = "x";
  r.name = "r";
  x.type = r.type = TF_FLOAT;
  signature.input_arg = inputs;
  signature.n_input_arg = 1;
  signature.output_arg = outputs;
  signature.n_output_arg = 1;

  Tensorflow__TensorShapeProto scalar;
  tensorflow__tensor_shape_proto__init(&scalar);
  Tensorflow__TensorProto tensor;
  tensorflow__tensor_proto__init(&tensor);
  float two = 2;
  tensor.dtype = TF_FLOAT;
  tensor.tensor_shape = &scalar;
  tensor.float_val = &two;
  tensor.n_float_val = 1;
  Tensorflow__AttrValue value, dtype;
  tensorflow__attr_value__init(&value);
  tensorflow__attr_value__init(&dtype);
  value.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
  value.tensor = &tensor;
  dtype.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
  dtype.type = TF_FLOAT;
  Tensorflow__NodeDef__AttrEntry value_entry, dtype_entry;
  tensorflow__node_def__attr_entry__init(&value_entry);
  tensorflow__node_def__attr_entry__init(&dtype_entry);
  value_entry.key = "value";
  value_entry.value = &value;
  dtype_entry.key = "dtype";
  dtype_entry.value = &dtype;
  Tensorflow__NodeDef__AttrEntry* const_attrs[2] = {&value_entry, &dtype_entry};
  Tensorflow__NodeDef constant;
  tensorflow__node_def__init(&constant);
  constant.name = "two";
  constant.op = "Const";
  constant.attr = const_attrs;
  constant.n_attr = 2;
  node_t mul;
  make_node(&mul, "mul", "Mul", "x", "two:output:0", false);
  Tensorflow__NodeDef* nodes[2] = {&constant, &mul.node};
  Tensorflow__FunctionDef__RetEntry ret;
  Tensorflow__FunctionDef__RetEntry* rets[1] = {&ret};
  tensorflow__function_def__ret_entry__init(&ret);
  ret.key = "r";
  ret.value = "mul:z:0";
  Tensorflow__FunctionDef def;
  tensorflow__function_def__init(&def);
  def.signature = &signature;
  def.node_def = nodes;
  def.n_node_def = 2;
  def.ret = rets;
  def.n_ret = 1;
  size_t size = tensorflow__function_def__get_packed_size(&def);
  uint8_t* bytes = malloc(size);
  tensorflow__function_def__pack(&def, bytes);
  TFE_ContextAddFunctionDef(f->ctx, (const char*)bytes, size, f->status);
  ASSERT_TF_OK(f->status);
  free(bytes);

  TFE_TensorHandle* input = float_handle(f->ctx, kDims, 1, kX);
  TFE_Op* op = TFE_NewOp(f->ctx, "twice", f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpAddInput(op, input, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* result = NULL;
  int n = 1;
  TFE_Execute(op, &result, &n, f->status);
  ASSERT_TF_OK(f->status);
  static const float kTwice[3] = {3, -4, 1};
  float values[3];
  read_floats(result, values, 3);
  for (int i = 0; i < 3; ++i) assert_true(values[i] == kTwice[i]);
  TFE_DeleteTensorHandle(result);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(input);
}

//===----------------------------------------------------------------------===//
// A FunctionDef as TensorFlow serializes one (Python's protobuf)
//===----------------------------------------------------------------------===//

// The bytes function_def_bytes.py prints, or NULL (skipped) without
// python3-protobuf.
static uint8_t* tensorflow_bytes(size_t* out_size) {
  char command[2048];
  snprintf(command, sizeof(command), "/usr/bin/python3 %s %s",
           LOOM_FUNCTION_DEF_SCRIPT, LOOM_TF_FRAMEWORK_DESCRIPTOR);
  FILE* pipe = popen(command, "r");
  assert_non_null(pipe);
  static char hex[8192];
  size_t length = fread(hex, 1, sizeof(hex) - 1, pipe);
  int result = pclose(pipe);
  assert_true(WIFEXITED(result));
  if (WEXITSTATUS(result) == 77) return NULL;
  assert_int_equal(WEXITSTATUS(result), 0);
  assert_true(length > 0 && length % 2 == 0);
  uint8_t* bytes = malloc(length / 2);
  for (size_t i = 0; i < length / 2; ++i) {
    unsigned value = 0;
    assert_int_equal(sscanf(hex + 2 * i, "%2x", &value), 1);
    bytes[i] = (uint8_t)value;
  }
  *out_size = length / 2;
  return bytes;
}

static void a_function_def_as_tensorflow_serializes_it(void** state) {
  eager_fixture_t* f = *state;
  size_t size = 0;
  uint8_t* bytes = tensorflow_bytes(&size);
  if (!bytes) skip();
  TF_Function* function = TF_FunctionImportFunctionDef(bytes, size, f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TF_FunctionName(function), "__inference_f_13");
  TF_Buffer* buffer = TF_NewBuffer();
  TF_FunctionToFunctionDef(function, buffer, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(buffer->length, size);
  assert_memory_equal(buffer->data, bytes, size);
  TF_DeleteBuffer(buffer);
  TFE_ContextAddFunction(f->ctx, function, f->status);
  ASSERT_TF_OK(f->status);
  TF_DeleteFunction(function);  // the context keeps its own
  call_and_check(f->ctx, "__inference_f_13", NULL, false);
  call_and_check(f->ctx, "StatefulPartitionedCall", "__inference_f_13", false);
  // The arguments' "_output_shapes" are checked.
  static const int64_t kTwo[1] = {2};
  TFE_TensorHandle* x = float_handle(f->ctx, kTwo, 1, kX);
  TFE_Op* op = binary_op(f->ctx, "__inference_f_13", x, x);
  TFE_TensorHandle* r = NULL;
  int n = 1;
  TFE_Execute(op, &r, &n, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function '__inference_f_13': input 0 ('x') has shape [2], "
                  "expected [3]");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(x);
  // The same bytes again: a different function of the same name.
  TFE_ContextAddFunctionDef(f->ctx, (const char*)bytes, size, f->status);
  ASSERT_TF_ERROR(f->status, TF_ALREADY_EXISTS,
                  "Cannot add function '__inference_f_13' because a different "
                  "function with the same name already exists.");
  free(bytes);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static void errors(void** state) {
  eager_fixture_t* f = *state;
  static const char kGarbage[] = "\xff\xff\xff";
  TFE_ContextAddFunctionDef(f->ctx, kGarbage, 3, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Invalid FunctionDef proto (3 bytes)");
  assert_null(TF_FunctionImportFunctionDef(kGarbage, 3, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid FunctionDef proto");
  TFE_ContextAddFunctionDef(f->ctx, "", 0, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "FunctionDef: the signature has no name");
  size_t size = 0;
  uint8_t* bytes = poly_def("g", "nothing", "mul:z:0", &size);
  TFE_ContextAddFunctionDef(f->ctx, (const char*)bytes, size, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'g': output 'r' has no entry in ret");
  free(bytes);
  bytes = poly_def("g", "r", "mul", &size);
  TFE_ContextAddFunctionDef(f->ctx, (const char*)bytes, size, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'g': node 'add': 'mul' names node 'mul' without "
                  "an output argument");
  free(bytes);
  bytes = poly_def("g", "r", "mul:q:0", &size);
  TFE_ContextAddFunctionDef(f->ctx, (const char*)bytes, size, f->status);
  ASSERT_TF_OK(f->status);  // output arguments are checked at the call
  free(bytes);
  TFE_TensorHandle* x = float_handle(f->ctx, kDims, 1, kX);
  TFE_Op* op = binary_op(f->ctx, "g", x, x);
  TFE_TensorHandle* r = NULL;
  int n = 1;
  TFE_Execute(op, &r, &n, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'g': node 'add': 'mul:q:0': op 'Mul' of node "
                  "'mul' has no output argument 'q'");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(x);
  TFE_ContextRemoveFunction(f->ctx, "nope", f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Tried to remove non-existent function 'nope'.");
  assert_null(TFE_NewOp(f->ctx, "nope", f->status));
  ASSERT_TF_ERROR(f->status, TF_NOT_FOUND, "Op type not registered 'nope'");
  TFE_ContextAddFunction(f->ctx, NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_ContextAddFunction: function is NULL");
  TFE_ContextAddFunctionDef(NULL, "", 0, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_ContextAddFunctionDef: ctx is NULL");
  TF_FunctionToFunctionDef(NULL, NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TF_FunctionToFunctionDef: func is NULL");
  assert_int_equal(TFE_ContextHasFunction(f->ctx, NULL), 0);
  TF_DeleteFunction(NULL);
}

// If and Case of TFE_NewOp, their branches named with
// TFE_OpSetAttrFunctionName / TFE_OpSetAttrFunctionList: poly(x, y) =
// x * y + x, sum(x, y) = y + x.
static void if_and_case_call_function_defs(void** state) {
  eager_fixture_t* f = *state;
  add_poly(f->ctx, "poly", f->status);
  ASSERT_TF_OK(f->status);
  size_t size = 0;
  uint8_t* bytes = poly_def("sum", "r", "y", &size);
  TFE_ContextAddFunctionDef(f->ctx, (const char*)bytes, size, f->status);
  free(bytes);
  ASSERT_TF_OK(f->status);
  static const float kSum[3] = {1.75f, 2, -2.5f};
  TFE_TensorHandle* x = float_handle(f->ctx, kDims, 1, kX);
  TFE_TensorHandle* y = float_handle(f->ctx, kDims, 1, kY);
  for (int k = 0; k < 4; ++k) {
    bool is_case = k >= 2;
    TFE_Op* op = TFE_NewOp(f->ctx, is_case ? "Case" : "If", f->status);
    ASSERT_TF_OK(f->status);
    TFE_TensorHandle* cond =
        is_case ? int_handle(f->ctx, NULL, 0, (const int32_t[]){k - 2})
                : scalar_handle(f->ctx, (float)(k % 2));
    TFE_OpAddInput(op, cond, f->status);
    TFE_OpAddInput(op, x, f->status);
    TFE_OpAddInput(op, y, f->status);
    ASSERT_TF_OK(f->status);
    if (is_case) {
      const TFE_Op* branches[2] = {TFE_NewOp(f->ctx, "poly", f->status),
                                   TFE_NewOp(f->ctx, "sum", f->status)};
      ASSERT_TF_OK(f->status);
      TFE_OpSetAttrFunctionList(op, "branches", branches, 2);
      TFE_DeleteOp((TFE_Op*)branches[0]);
      TFE_DeleteOp((TFE_Op*)branches[1]);
    } else {
      TFE_OpSetAttrFunctionName(op, "then_branch", "poly", 4);
      TFE_OpSetAttrFunctionName(op, "else_branch", "sum", 3);
    }
    TF_DataType tout = TF_FLOAT;
    TFE_OpSetAttrTypeList(op, "Tout", &tout, 1);
    TFE_TensorHandle* r = NULL;
    int n = 1;
    TFE_Execute(op, &r, &n, f->status);
    ASSERT_TF_OK(f->status);
    assert_int_equal(n, 1);
    // If: false (0.0) runs sum, true poly; Case: 0 poly, 1 sum.
    bool poly = is_case ? k == 2 : k == 1;
    float values[3];
    read_floats(r, values, 3);
    for (int i = 0; i < 3; ++i) {
      assert_true(values[i] == (poly ? kF[i] : kSum[i]));
    }
    TFE_DeleteTensorHandle(r);
    TFE_DeleteTensorHandle(cond);
    TFE_DeleteOp(op);
  }
  // A branch the library does not have.
  TFE_Op* op = TFE_NewOp(f->ctx, "If", f->status);
  TFE_TensorHandle* cond = scalar_handle(f->ctx, 1);
  TFE_OpAddInput(op, cond, f->status);
  TFE_OpAddInput(op, x, f->status);
  TFE_OpSetAttrFunctionName(op, "then_branch", "nope", 4);
  TFE_OpSetAttrFunctionName(op, "else_branch", "sum", 3);
  TF_DataType tout = TF_FLOAT;
  TFE_OpSetAttrTypeList(op, "Tout", &tout, 1);
  TFE_TensorHandle* r = NULL;
  int n = 1;
  TFE_Execute(op, &r, &n, f->status);
  ASSERT_TF_ERROR(f->status, TF_NOT_FOUND,
                  "If: attr 'then_branch': function 'nope' is not in the "
                  "context's function library");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(cond);
  TFE_DeleteTensorHandle(x);
  TFE_DeleteTensorHandle(y);
}

//===----------------------------------------------------------------------===//
// Control outputs
//===----------------------------------------------------------------------===//

static TFE_TensorHandle* new_variable(eager_fixture_t* f) {
  TFE_Op* op = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  TFE_OpSetAttrShape(op, "shape", kDims, 1, f->status);
  TFE_OpSetAttrString(op, "shared_name", "v", 1);
  TFE_TensorHandle* var = NULL;
  int n = 1;
  TFE_Execute(op, &var, &n, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  return var;
}

// assign(v: resource, x: float) -> (): AssignVariableOp(v, x), no output;
// with `control`, the node is the control output "assigned".
static void add_assign(eager_fixture_t* f, const char* name, bool control) {
  fdef_t d;
  fdef_init(&d, name);
  fdef_input(&d, "v", TF_RESOURCE, NULL, NULL, NULL);
  fdef_input(&d, "x", TF_FLOAT, NULL, NULL, NULL);
  fdef_node_t* n =
      fdef_node(&d, "assign", "AssignVariableOp", (const char*[]){"v", "x", 0});
  fdef_type(n, "dtype", TF_FLOAT);
  if (control) fdef_control_ret(&d, "assigned", "assign", true);
  d.signature.is_stateful = 1;
  fdef_add(&d, f->ctx, f->status);
  ASSERT_TF_OK(f->status);
}

// A function whose only effect is an AssignVariableOp assigns at every
// call, the first (op by op) and the next (planned), the node named in
// control_ret or not: Loom runs every stateful node of a body (as
// TensorFlow does for tf.function's bodies, whose automatic control
// dependencies make each stateful op a control output).
static void a_control_output_runs_its_assign(void** state) {
  eager_fixture_t* f = *state;
  add_assign(f, "assign_ctl", true);
  add_assign(f, "assign_free", false);
  TFE_TensorHandle* var = new_variable(f);
  const char* names[2] = {"assign_ctl", "assign_free"};
  for (int call = 0; call < 6; ++call) {
    float values[3] = {(float)call, -2.5f * (float)call, 0.125f};
    TFE_TensorHandle* x = float_handle(f->ctx, kDims, 1, values);
    TFE_Op* op = binary_op(f->ctx, names[call % 2], var, x);
    int n = 0;
    TFE_Execute(op, NULL, &n, f->status);
    ASSERT_TF_OK(f->status);
    assert_int_equal(n, 0);
    TFE_DeleteOp(op);
    op = TFE_NewOp(f->ctx, "ReadVariableOp", f->status);
    TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
    TFE_OpAddInput(op, var, f->status);
    TFE_TensorHandle* read = NULL;
    n = 1;
    TFE_Execute(op, &read, &n, f->status);
    ASSERT_TF_OK(f->status);
    float got[3];
    read_floats(read, got, 3);
    for (int i = 0; i < 3; ++i) assert_true(got[i] == values[i]);
    TFE_DeleteTensorHandle(read);
    TFE_DeleteOp(op);
    TFE_DeleteTensorHandle(x);
  }
  TFE_DeleteTensorHandle(var);
}

// checked(x: float, i: int32) -> y: float = x * x, with node check =
// Gather(x, i), which no output reads; with `control` it is the control
// output "checked".
static void add_checked(eager_fixture_t* f, const char* name, bool control) {
  fdef_t d;
  fdef_init(&d, name);
  fdef_input(&d, "x", TF_FLOAT, NULL, NULL, NULL);
  fdef_input(&d, "i", TF_INT32, NULL, NULL, NULL);
  fdef_output(&d, "y", TF_FLOAT, NULL, NULL, NULL, "mul:z:0");
  fdef_node_t* n = fdef_node(&d, "mul", "Mul", (const char*[]){"x", "x", 0});
  fdef_type(n, "T", TF_FLOAT);
  n = fdef_node(&d, "check", "Gather", (const char*[]){"x", "i", 0});
  fdef_type(n, "Tparams", TF_FLOAT);
  fdef_type(n, "Tindices", TF_INT32);
  if (control) fdef_control_ret(&d, "checked", "check", true);
  fdef_add(&d, f->ctx, f->status);
  ASSERT_TF_OK(f->status);
}

// Calls `name` on kX and index [index]; returns the status' code.
static TF_Code call_checked(eager_fixture_t* f, const char* name,
                            int32_t index) {
  static const int64_t kOne[1] = {1};
  TFE_TensorHandle* x = float_handle(f->ctx, kDims, 1, kX);
  TFE_TensorHandle* i = int_handle(f->ctx, kOne, 1, &index);
  TFE_Op* op = binary_op(f->ctx, name, x, i);
  TFE_TensorHandle* y = NULL;
  int n = 1;
  TFE_Execute(op, &y, &n, f->status);
  if (TF_GetCode(f->status) == TF_OK) {
    float values[3];
    read_floats(y, values, 3);
    for (int k = 0; k < 3; ++k) assert_true(values[k] == kX[k] * kX[k]);
    TFE_DeleteTensorHandle(y);
  }
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(i);
  TFE_DeleteTensorHandle(x);
  return TF_GetCode(f->status);
}

// A stateless node named in control_ret runs at every call: a planned call
// (the second) keeps it, where it leaves out the same node without
// control_ret (dead: no output and no stateful node reads it).
static void a_control_output_is_never_dead(void** state) {
  eager_fixture_t* f = *state;
  add_checked(f, "checked_ctl", true);
  add_checked(f, "checked_free", false);
  assert_int_equal(call_checked(f, "checked_ctl", 1), TF_OK);
  assert_int_equal(call_checked(f, "checked_ctl", 7), TF_INVALID_ARGUMENT);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'checked_ctl': node 'check' (Gather)");
  assert_int_equal(call_checked(f, "checked_free", 1), TF_OK);
  assert_int_equal(call_checked(f, "checked_free", 7), TF_OK);
  // The plans: mul and check, mul alone.
  const char* names[2] = {"checked_ctl", "checked_free"};
  for (int k = 0; k < 2; ++k) {
    loom_function_t* function = NULL;
    LOOM_ASSERT_OK(loom_context_find_function((loom_context_t*)f->ctx, names[k],
                                              &function));
    loom_function_stats_t stats = {.struct_size = sizeof(stats)};
    LOOM_ASSERT_OK(loom_function_get_stats(function, &stats));
    assert_int_equal(stats.plans_built, 1);
    assert_int_equal(stats.planned_nodes, 2 - k);
    loom_function_release(function);
  }
}

static void control_output_errors(void** state) {
  eager_fixture_t* f = *state;
  fdef_t d;
  fdef_init(&d, "g");
  fdef_input(&d, "x", TF_FLOAT, NULL, NULL, NULL);
  fdef_output(&d, "y", TF_FLOAT, NULL, NULL, NULL, "x");
  fdef_control_ret(&d, "done", "nope", true);
  fdef_add(&d, f->ctx, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'g': control output 'done' names node 'nope', "
                  "which the function does not have");
  assert_int_equal(TFE_ContextHasFunction(f->ctx, "g"), 0);
  // A control output of the signature without its control_ret entry.
  fdef_init(&d, "g");
  fdef_input(&d, "x", TF_FLOAT, NULL, NULL, NULL);
  fdef_output(&d, "y", TF_FLOAT, NULL, NULL, NULL, "x");
  d.control_outputs[d.signature.n_control_output++] = "done";
  fdef_add(&d, f->ctx, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'g': control output 'done' has no entry in "
                  "control_ret");
}

// outer(x: float, i: int32) -> y: float = Identity(x) after node call =
// checked_ctl(x, i), through control input `control`.
static void add_after_call(eager_fixture_t* f, const char* name,
                           const char* control) {
  fdef_t d;
  fdef_init(&d, name);
  fdef_input(&d, "x", TF_FLOAT, NULL, NULL, NULL);
  fdef_input(&d, "i", TF_INT32, NULL, NULL, NULL);
  fdef_output(&d, "y", TF_FLOAT, NULL, NULL, NULL, "after:output:0");
  fdef_node(&d, "call", "checked_ctl", (const char*[]){"x", "i", 0});
  fdef_node_t* n =
      fdef_node(&d, "after", "Identity", (const char*[]){"x", control, 0});
  fdef_type(n, "T", TF_FLOAT);
  fdef_add(&d, f->ctx, f->status);
}

// A control input names a node ("^call"), which runs first: when the
// callee's control output fails, so does the node waiting for the call. Naming
// the callee's control output ("^call:checked") is INVALID_ARGUMENT, as in
// TensorFlow, whose instantiation looks a control input up among the body's
// argument names, nodes without outputs and nodes' data outputs ("node:out"),
// never a callee's control outputs ("input[1] == '^call:checked', is not
// found.").
static void a_control_input_names_a_call_node(void** state) {
  eager_fixture_t* f = *state;
  add_checked(f, "checked_ctl", true);
  add_after_call(f, "after_call", "^call");
  ASSERT_TF_OK(f->status);
  static const int64_t kOne[1] = {1};
  for (int32_t index = 1; index <= 7; index += 6) {
    TFE_TensorHandle* x = float_handle(f->ctx, kDims, 1, kX);
    TFE_TensorHandle* i = int_handle(f->ctx, kOne, 1, &index);
    TFE_Op* op = binary_op(f->ctx, "after_call", x, i);
    TFE_TensorHandle* y = NULL;
    int n = 1;
    TFE_Execute(op, &y, &n, f->status);
    if (index == 1) {
      ASSERT_TF_OK(f->status);
      float values[3];
      read_floats(y, values, 3);
      for (int k = 0; k < 3; ++k) assert_true(values[k] == kX[k]);
      TFE_DeleteTensorHandle(y);
    } else {
      ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                      "Gather: indices[0] = 7 is not in [0, 3)");
    }
    TFE_DeleteOp(op);
    TFE_DeleteTensorHandle(i);
    TFE_DeleteTensorHandle(x);
  }
  add_after_call(f, "after_done", "^call:checked");
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'after_done': node 'after': control input "
                  "'^call:checked' names no node");
  assert_int_equal(TFE_ContextHasFunction(f->ctx, "after_done"), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(function_defs_from_protobuf_c,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(function_defs_from_protobuf_c,
                                      eager_setup_async, eager_teardown),
      cmocka_unit_test_setup_teardown(
          a_function_def_as_tensorflow_serializes_it, eager_setup_sync,
          eager_teardown),
      cmocka_unit_test_setup_teardown(
          a_function_def_as_tensorflow_serializes_it, eager_setup_async,
          eager_teardown),
      cmocka_unit_test_setup_teardown(const_nodes_decode_tensor_protos,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(errors, eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(if_and_case_call_function_defs,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(if_and_case_call_function_defs,
                                      eager_setup_async, eager_teardown),
      cmocka_unit_test_setup_teardown(a_control_output_runs_its_assign,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(a_control_output_runs_its_assign,
                                      eager_setup_async, eager_teardown),
      cmocka_unit_test_setup_teardown(a_control_output_is_never_dead,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(a_control_input_names_a_call_node,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(a_control_input_names_a_call_node,
                                      eager_setup_async, eager_teardown),
      cmocka_unit_test_setup_teardown(control_output_errors, eager_setup_sync,
                                      eager_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
