// Attributes and the kinds Loom gives them, shown by the logging handler
// (which prints an op's attributes) and by the op-attribute kernels.
// RUN: loom run --plugin %tfrt_test_ops %s | FileCheck %s

// Integers: untyped ones are i64, `: i32` (and i8, i16) i32, `: i1` a bool;
// floats: untyped f64, `: f32` (and bf16, f16) f32; booleans, strings,
// nested and mixed arrays (aggregates), dense tensors, types, shapes,
// symbol references (functions) and unit attributes.
// CHECK-LABEL: --- Running 'kinds'
// CHECK-NEXT: [0] dispatch 'tfrt_test.create_from_scalar' 0 arguments, 1 result, OpAttrs contains 23 entries:
// CHECK-NEXT:   'b' type=F32 value=2.500000e+00
// CHECK-NEXT:   'd' type=F64 value=2.500000e-01
// CHECK-NEXT:   'dense' type=DENSE value=dtype=I64, rank=1, elt_count=2
// CHECK-NEXT:   'empty' type=I64 value=[]
// CHECK-NEXT:   'f' type=F32 value=1.500000e+00
// CHECK-NEXT:   'floats' type=F32 value=[1.000000e+00, 2.000000e+00]
// CHECK-NEXT:   'fn' type=FUNC value=FUNC function_name: kinds
// CHECK-NEXT:   'i1' type=BOOL value=1
// CHECK-NEXT:   'i64' type=I64 value=6
// CHECK-NEXT:   'mixed' type=AGGREGATE value=elt_count=3
// CHECK-NEXT:   'nested' type=AGGREGATE value=elt_count=2
// CHECK-NEXT:   's' type=CHAR
// CHECK-NEXT:   'sh' type=SHAPE value=<2x-1x3>
// CHECK-NEXT:   'shape' type=I64 value=[1]
// CHECK-NEXT:   'small' type=I32 value=-3
// CHECK-NEXT:   'strings' type=CHAR
// CHECK-NEXT:   't' type=BOOL value=1
// CHECK-NEXT:   'type' type=DTYPE value=F32
// CHECK-NEXT:   'types' type=DTYPE value=[I32, F64]
// CHECK-NEXT:   'unit_attr' type=BOOL value=1
// CHECK-NEXT:   'unranked' type=SHAPE value=<*>
// CHECK-NEXT:   'untyped' type=I64 value=5
// CHECK-NEXT:   'value' type=I32 value=1
func.func @kinds() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %log = "corert.create_logging_op_handler"(%cpu) : (!corert.ophandler) -> !corert.ophandler
  %a = corert.executeop(%log) "tfrt_test.create_from_scalar"() {
      shape = [1], value = 1 : i32, untyped = 5, i64 = 6 : i64, i1 = 1 : i1,
      small = -3 : i8, f = 1.5 : f32, b = 2.5 : bf16, d = 0.25, t = true,
      s = "str", nested = [[1, 2], ["a", "b"]], strings = ["x", "y"],
      type = f32, types = [i32, f64], sh = #corert.shape<2x?x3>,
      unranked = #corert.shape<*>, fn = @kinds, unit_attr,
      dense = dense<[1, 2]> : tensor<2xi64>, floats = [1.0 : f32, 2.0 : f32],
      empty = [], mixed = [1, "two", 3.0]} : 1
  tfrt.return %ch0 : !tfrt.chain
}
// CHECK: 'kinds' returned !tfrt.chain value

// The attribute sets of !corert.opattrs values, changed in chain order.
// CHECK-LABEL: --- Running 'op_attrs'
// CHECK-NEXT: OpAttrs is empty
// CHECK-NEXT: OpAttrs contains 2 entries:
// CHECK-NEXT:   'shape' type=I32 value=[1, 65536]
// CHECK-NEXT:   'value' type=F32 value=1.000000e+00
// CHECK:      OpAttrs contains 12 entries:
// CHECK-NEXT:   'agg' type=AGGREGATE value=elt_count=2 [{dtype=I32, rank=2, elt_count=4}, {dtype=I64, rank=0, elt_count=1}]
// CHECK-NEXT:   'dense' type=DENSE value=dtype=I32, rank=2, elt_count=4
// CHECK-NEXT:   'f32s' type=F32 value=[5.000000e-01]
// CHECK-NEXT:   'flag' type=BOOL value=0
// CHECK-NEXT:   'i64s' type=I64 value=[1, 2]
// CHECK-NEXT:   'int' type=I32 value=3
// CHECK-NEXT:   'name' type=CHAR
// CHECK-NEXT:   'sh' type=SHAPE value=<1x2x3>
// CHECK-NEXT:   'shape' type=I32 value=[1, 65536]
// CHECK-NEXT:   'type' type=DTYPE value=F32
// CHECK-NEXT:   'typed' type=DTYPE value=I8
// CHECK-NEXT:   'value' type=F32 value=1.000000e+00
func.func @op_attrs() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %attrs = "corert.create_op_attrs"() : () -> !corert.opattrs
  %ch1 = "tfrt_test.corert.op_attrs_print"(%attrs, %ch0) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch2 = "corert.op_attrs_set_array.i32"(%attrs, %ch1) {key = "shape", value = [1 : i32, 65536 : i32]} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch3 = "corert.op_attrs_set.f32"(%attrs, %ch2) {key = "value", value = 1.0 : f32} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch4 = "tfrt_test.corert.op_attrs_print"(%attrs, %ch3) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch5 = "corert.op_attrs_set.dtype"(%attrs, %ch4) {key = "type", value = f32} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch6 = "corert.op_attrs_set.dense"(%attrs, %ch5) {key = "dense", value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch7 = "corert.op_attrs_set.bool"(%attrs, %ch6) {key = "flag", value = false} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch8 = "corert.op_attrs_set.i32"(%attrs, %ch7) {key = "int", value = 3 : i32} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch9 = "corert.op_attrs_set.shape"(%attrs, %ch8) {key = "sh", value = #corert.shape<1x2x3>} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch10 = "corert.op_attrs_set.str"(%attrs, %ch9) {key = "name", value = "hi"} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch11 = "corert.op_attrs_set.aggregate"(%attrs, %ch10) {key = "agg", value = [dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, dense<1> : tensor<i64>]} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch12 = "corert.op_attrs_set_array.i64"(%attrs, %ch11) {key = "i64s", value = [1, 2]} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch13 = "corert.op_attrs_set_array.f32"(%attrs, %ch12) {key = "f32s", value = [0.5 : f32]} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // A type written as a dialect type.
  %ch14 = corert.op_attrs_set.dtype %attrs, %ch13 {key = "typed", value = i8}
  %ch15 = "tfrt_test.corert.op_attrs_print"(%attrs, %ch14) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch15 : !tfrt.chain
}
// CHECK: 'op_attrs' returned !tfrt.chain value

// Function attributes: a second dictionary in corert.executeop holds
// function names.
// CHECK-LABEL: --- Running 'function_attributes'
// CHECK-NEXT: [0] dispatch 'tfrt_test.create_from_scalar' 0 arguments, 1 result, OpAttrs contains 4 entries:
// CHECK-NEXT:   'body' type=FUNC value=FUNC function_name: kinds
// CHECK-NEXT:   'shape' type=I64 value=[]
// CHECK-NEXT:   'then' type=FUNC value=FUNC function_name: op_attrs
// CHECK-NEXT:   'value' type=F64 value=1.000000e+00
func.func @function_attributes() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %log = "corert.create_logging_op_handler"(%cpu) : (!corert.ophandler) -> !corert.ophandler
  %a = corert.executeop(%log) "tfrt_test.create_from_scalar"()
      {shape = [], value = 1.0} {then = "op_attrs", body = @kinds} : 1
  tfrt.return %ch0 : !tfrt.chain
}
// CHECK: 'function_attributes' returned !tfrt.chain value
