// "tf.X" in corert.executeop runs Loom's op X: here ops of the built-in op
// library (registered through TensorFlow's kernel C API, with TensorFlow's
// shape functions); attribute T is inferred from the inputs.
// RUN: not loom run %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'builtin_ops'
func.func @builtin_ops() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.const_dense_tensor dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.000000e+00, 4.000000e+00, 9.000000e+00, 1.600000e+01]
  %b = corert.executeop(%cpu) "tf.Mul"(%a, %a) : 1
  %ch1 = corert.print_tensorhandle(%b, %ch0)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [2.000000e+00, 6.000000e+00, 1.200000e+01, 2.000000e+01]
  %c = corert.executeop(%cpu) "tf.AddV2"(%a, %b) : 1
  %ch2 = corert.print_tensorhandle(%c, %ch1)
  // Broadcasting, as TensorFlow does it.
  %row = corert.const_dense_tensor dense<[10.0, 20.0]> : tensor<2xf32>
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [9.000000e+00, 1.800000e+01, 7.000000e+00, 1.600000e+01]
  %d = corert.executeop(%cpu) "tf.Sub"(%row, %a) : 1
  %ch3 = corert.print_tensorhandle(%d, %ch2)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.000000e+01, 2.000000e+01, 1.000000e+01, 2.000000e+01]
  %e = corert.executeop(%cpu) "tf.Maximum"(%a, %row) : 1
  %ch4 = corert.print_tensorhandle(%e, %ch3)
  tfrt.return %ch4 : !tfrt.chain
}
// CHECK-NEXT: 'builtin_ops' returned !tfrt.chain value

// The op's own checks report at the operation: inputs of different dtypes.
// CHECK-LABEL: --- Running 'op_error'
func.func @op_error() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.const_dense_tensor dense<1.0> : tensor<2xf32>
  %b = corert.const_dense_tensor dense<1> : tensor<2xi32>
  // CHECK-NEXT: tf_ops.mlir:[[@LINE+1]]:8: error: runtime error: {{.*}}AddV2{{.*}}
  %c = corert.executeop(%cpu) "tf.AddV2"(%a, %b) : 1
  tfrt.return %c : !corert.tensorhandle
}
// CHECK-NEXT: 'op_error' returned <<error: {{.*}}AddV2{{.*}}>>

// An op nobody registered goes to the cpu handler's fallback, "null", and
// keeps its name as written, as in TFRT's errors.
// CHECK-LABEL: --- Running 'unknown_op'
func.func @unknown_op() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  // CHECK-NEXT: tf_ops.mlir:[[@LINE+1]]:8: error: runtime error: tf.NoSuchOp was not supported by NullOpHandler
  %a = corert.executeop(%cpu) "tf.NoSuchOp"() : 1
  tfrt.return %a : !corert.tensorhandle
}
// CHECK-NEXT: 'unknown_op' returned <<error: tf.NoSuchOp was not supported by NullOpHandler>>
