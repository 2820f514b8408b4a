// The generic form of corert.executeop, corert.executeop.seq and
// corert_sync.executeop, as TFRT prints them: the op's name in op_name, its
// attributes as [key, value] pairs in op_attrs, function attributes in
// op_func_attrs. And the custom form without `: N`, for no results.
// RUN: loom run --plugin %tfrt_test_ops %s | FileCheck %s
// RUN: loom check --split-input-file --verify-diagnostics %S/inputs/generic_executeop_errors.mlir

// CHECK-LABEL: --- Running 'generic'
func.func @generic() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = "corert.get_op_handler"(%ch0) {op_handler_name = "cpu"} : (!tfrt.chain) -> !corert.ophandler
  %a = "corert.executeop"(%cpu) {op_attrs = [["shape", [2, 2]], ["values", [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32]]], op_func_attrs = [], op_name = "tfrt_test.create_dense_tensor"} : (!corert.ophandler) -> !corert.tensorhandle
  %b = "corert.executeop"(%cpu, %a, %a) {op_attrs = [["transpose_a", false], ["transpose_b", true]], op_func_attrs = [], op_name = "tfrt_test.matmul"} : (!corert.ophandler, !corert.tensorhandle, !corert.tensorhandle) -> !corert.tensorhandle
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [5.000000e+00, 1.100000e+01, 1.100000e+01, 2.500000e+01]
  %ch1 = "corert.print_tensorhandle"(%b, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  // tf.* ops and typed attributes; no op_attrs at all.
  %c = "corert.executeop"(%cpu, %b) {op_attrs = [["DstT", i32], ["Truncate", false]], op_name = "tf.Cast"} : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  %d = "corert.executeop"(%cpu, %c, %c) {op_name = "tf.AddV2"} : (!corert.ophandler, !corert.tensorhandle, !corert.tensorhandle) -> !corert.tensorhandle
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 2], values = [10, 22, 22, 50]
  %ch2 = "corert.print_tensorhandle"(%d, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  // .seq: a chain in and out; no results besides the chain.
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 2], values = [10, 22, 22, 50]
  %ch3 = "corert.executeop.seq"(%cpu, %ch2, %d) {op_attrs = [], op_func_attrs = [], op_name = "tfrt_test.print"} : (!corert.ophandler, !tfrt.chain, !corert.tensorhandle) -> !tfrt.chain
  %ch4, %e = "corert.executeop.seq"(%cpu, %ch3) {op_attrs = [["shape", [1]], ["value", 7 : i32]], op_name = "tfrt_test.create_from_scalar"} : (!corert.ophandler, !tfrt.chain) -> (!tfrt.chain, !corert.tensorhandle)
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [1], value = 7
  %ch5 = "corert.print_tensorhandle"(%e, %ch4) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch5 : !tfrt.chain
}
// CHECK-NEXT: 'generic' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'generic_sync'
func.func @generic_sync() attributes {tfrt.sync} {
  %cpu = "corert_sync.get_op_handler"() {op_handler_name = "cpu"} : () -> !corert.ophandler
  %a = "corert_sync.executeop"(%cpu) {op_attrs = [["shape", [3]], ["values", [1 : i32, 2 : i32, 3 : i32]]], op_name = "tfrt_test.create_dense_tensor"} : (!corert.ophandler) -> !corert.tensorhandle
  %b = "corert_sync.executeop"(%cpu, %a, %a) {op_attrs = [], op_name = "tf.Mul"} : (!corert.ophandler, !corert.tensorhandle, !corert.tensorhandle) -> !corert.tensorhandle
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [3], values = [1, 4, 9]
  "corert_sync.print_tensorhandle"(%b) : (!corert.tensorhandle) -> ()
  tfrt.return
}

// CHECK-LABEL: --- Running 'no_result_count'
func.func @no_result_count() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [1], values = [5 : i32]} : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [1], values = [5]
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print"(%a)
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'no_result_count' returned !tfrt.chain value
