// Frozen attribute sets (!corert.opattrs_ref): tfrt_test's
// corert.op_attrs_freeze copies a set as it is, and op_attrs_ref_print
// prints the copy, which later changes to the set do not reach.
// RUN: not loom run --plugin %tfrt_test_ops %s 2>&1 | FileCheck %s
// RUN: loom run --plugin %tfrt_test_ops --verify-diagnostics %s

// CHECK-LABEL: --- Running 'freeze'
func.func @freeze() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %attrs = corert.create_op_attrs
  %ch1 = corert.op_attrs_set.i32 %attrs, %ch0 {key = "b", value = 2 : i32}
  %ch2 = corert.op_attrs_set.i32 %attrs, %ch1 {key = "a", value = 1 : i32}
  %ref, %ch3 = "tfrt_test.corert.op_attrs_freeze"(%attrs, %ch2) : (!corert.opattrs, !tfrt.chain) -> (!corert.opattrs_ref, !tfrt.chain)
  %ch4 = "corert.op_attrs_set_array.i64"(%attrs, %ch3) {key = "c", value = [9, 8, 7, 6, 5, 4]} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch5 = "corert.op_attrs_set.f32"(%attrs, %ch4) {key = "a", value = 0.5 : f32} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: OpAttrs contains 2 entries:
  // CHECK-NEXT:   'a' type=I32 value=1
  // CHECK-NEXT:   'b' type=I32 value=2
  %ch6 = "tfrt_test.corert.op_attrs_ref_print"(%ref, %ch5) : (!corert.opattrs_ref, !tfrt.chain) -> !tfrt.chain
  // CHECK:      OpAttrs contains 3 entries:
  // CHECK-NEXT:   'a' type=F32 value=5.000000e-01
  // CHECK-NEXT:   'b' type=I32 value=2
  // CHECK-NEXT:   'c' type=I64 value=[9, 8, 7, 6, 5...]
  %ch7 = "tfrt_test.corert.op_attrs_print"(%attrs, %ch6) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // A second freeze sees the changes; an empty set freezes too.
  %ref2, %ch8 = "tfrt_test.corert.op_attrs_freeze"(%attrs, %ch7) : (!corert.opattrs, !tfrt.chain) -> (!corert.opattrs_ref, !tfrt.chain)
  // CHECK:      OpAttrs contains 3 entries:
  // CHECK-NEXT:   'a' type=F32 value=5.000000e-01
  %ch9 = "tfrt_test.corert.op_attrs_ref_print"(%ref2, %ch8) : (!corert.opattrs_ref, !tfrt.chain) -> !tfrt.chain
  %empty = corert.create_op_attrs
  %ref3, %ch10 = "tfrt_test.corert.op_attrs_freeze"(%empty, %ch9) : (!corert.opattrs, !tfrt.chain) -> (!corert.opattrs_ref, !tfrt.chain)
  // CHECK: OpAttrs is empty
  %ch11 = "tfrt_test.corert.op_attrs_ref_print"(%ref3, %ch10) : (!corert.opattrs_ref, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch11 : !tfrt.chain
}
// CHECK: 'freeze' returned !tfrt.chain value

// A set where a frozen one is expected, and the reverse.
// CHECK-LABEL: --- Running 'wrong_kinds'
func.func @wrong_kinds() -> (!tfrt.chain, !tfrt.chain) {
  %ch0 = tfrt.new.chain
  %attrs = corert.create_op_attrs
  // CHECK-NEXT: op_attrs_refs.mlir:[[@LINE+2]]:10: error: runtime error: 'tfrt_test.corert.op_attrs_ref_print': argument 0 is a !corert.opattrs, expected a !corert.opattrs_ref
  // expected-error @+1 {{argument 0 is a !corert.opattrs, expected a !corert.opattrs_ref}}
  %ch1 = "tfrt_test.corert.op_attrs_ref_print"(%attrs, %ch0) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ref, %ch2 = "tfrt_test.corert.op_attrs_freeze"(%attrs, %ch0) : (!corert.opattrs, !tfrt.chain) -> (!corert.opattrs_ref, !tfrt.chain)
  // CHECK-NEXT: op_attrs_refs.mlir:[[@LINE+2]]:17: error: runtime error: 'tfrt_test.corert.op_attrs_freeze': argument 0 is a !corert.opattrs_ref, expected a !corert.opattrs
  // expected-error @+1 {{argument 0 is a !corert.opattrs_ref, expected a !corert.opattrs}}
  %ref2, %ch3 = "tfrt_test.corert.op_attrs_freeze"(%ref, %ch2) : (!corert.opattrs_ref, !tfrt.chain) -> (!corert.opattrs_ref, !tfrt.chain)
  tfrt.return %ch1, %ch3 : !tfrt.chain, !tfrt.chain
}
// CHECK-NEXT: 'wrong_kinds' returned <<error: 'tfrt_test.corert.op_attrs_ref_print': argument 0 is a !corert.opattrs, expected a !corert.opattrs_ref>>,<<error: 'tfrt_test.corert.op_attrs_freeze': argument 0 is a !corert.opattrs_ref, expected a !corert.opattrs>>
