// An attribute that the op's definition does not declare is an error, as
// in TensorFlow: reported where it is written, naming the op and the
// attribute, before anything runs. Names starting with '_' are internal
// attributes and pass; ops without a definition (tfrt_test's, native to
// the cpu handler) declare nothing to check.
// RUN: not loom run --split-input-file --plugin %tfrt_test_ops %s 2>&1 | FileCheck %s

// CHECK: unknown_attrs.mlir:[[#@LINE+6]]:51: error: op 'AddV2' has no attribute 'bogus'; its attributes are T
// CHECK-NEXT: unknown_attrs.mlir:[[#@LINE+6]]:59: error: op 'Identity' has no attribute 'typo'; its attributes are T
func.func @unknown() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.const_dense_tensor dense<[1.0, 2.0]> : tensor<2xf32>
  %b = corert.executeop(%cpu) "tf.AddV2"(%a, %a) {bogus = 3 : i32} : 1
  %c = corert.executeop(%cpu) "tf.Identity"(%b) {T = f32, "typo" = 1} : 1
  %ch1 = corert.print_tensorhandle(%c, %ch0)
  tfrt.return %ch1 : !tfrt.chain
}

// -----

// CHECK-NOT: Running 'unknown'
// CHECK-LABEL: --- Running 'known':
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [2.000000e+00, 4.000000e+00]
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [2.000000e+00, 4.000000e+00]
// CHECK-NEXT: 'known' returned !tfrt.chain value
func.func @known() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.const_dense_tensor dense<[1.0, 2.0]> : tensor<2xf32>
  %b = corert.executeop(%cpu) "tf.AddV2"(%a, %a) {_class = "internal"} : 1
  %c = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) {anything = 1} : 1
  %ch1 = corert.print_tensorhandle(%b, %ch0)
  %ch2 = corert.print_tensorhandle(%c, %ch1)
  tfrt.return %ch2 : !tfrt.chain
}
