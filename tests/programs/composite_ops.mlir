// Composite ops: corert.make_composite_op makes an op of a function, and
// corert.execute_crt_op executes it on tensor handles. The function takes
// and returns a chain before its tensor handles (TFRT's form) or no chain.
// RUN: not loom run --plugin %tfrt_test_ops %s 2>&1 | FileCheck %s
// RUN: loom run --plugin %tfrt_test_ops --verify-diagnostics %s

func.func @square(%ch: !tfrt.chain, %x: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  %cpu = corert.get_op_handler %ch "cpu"
  // Fails in @errors below:
  // expected-error @+1 {{matmul arguments have incompatible shapes}}
  %y = corert.executeop(%cpu) "tfrt_test.matmul"(%x, %x)
      {transpose_a = false, transpose_b = false} : 1
  tfrt.return %ch, %y : !tfrt.chain, !corert.tensorhandle
}

func.func @double_twice(%x: !corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle) {
  %ch = tfrt.new.chain
  %cpu = corert.get_op_handler %ch "cpu"
  %y = corert.executeop(%cpu) "tf.AddV2"(%x, %x) : 1
  %z = corert.executeop(%cpu) "tf.AddV2"(%y, %y) : 1
  tfrt.return %y, %z : !corert.tensorhandle, !corert.tensorhandle
}

func.func @pick(%ch: !tfrt.chain, %c: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  %cpu = corert.get_op_handler %ch "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2], values = [10 : i32, 20 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2], values = [30 : i32, 40 : i32]} : 1
  // The predicate arrives later (an async op), and the result after it.
  %late = corert.executeop(%cpu) "tfrt_test.async.noop"(%c) : 1
  %r:2 = corert.cond %late @first @second (%ch, %a, %b) : (!corert.tensorhandle, !corert.tensorhandle) -> (!corert.tensorhandle)
  tfrt.return %r#0, %r#1 : !tfrt.chain, !corert.tensorhandle
}

func.func @first(%ch: !tfrt.chain, %a: !corert.tensorhandle, %b: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  tfrt.return %ch, %a : !tfrt.chain, !corert.tensorhandle
}

func.func @second(%ch: !tfrt.chain, %a: !corert.tensorhandle, %b: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  tfrt.return %ch, %b : !tfrt.chain, !corert.tensorhandle
}

// CHECK: --- Not running 'square' because it has arguments.

// CHECK-LABEL: --- Running 'composite'
func.func @composite() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [1, 1], values = [3.0 : f32]} : 1
  %op = "corert.make_composite_op"() {fn = @square} : () -> !corert.op
  %r = "corert.execute_crt_op"(%op, %a) {op_attrs = [], op_func_attrs = []} : (!corert.op, !corert.tensorhandle) -> !corert.tensorhandle
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 1], values = [9.000000e+00]
  %ch1 = corert.print_tensorhandle(%r, %ch0)
  // The same op again, on its own result; and the op's result feeds others.
  %s = "corert.execute_crt_op"(%op, %r) {op_attrs = []} : (!corert.op, !corert.tensorhandle) -> !corert.tensorhandle
  %t = corert.executeop(%cpu) "tfrt_test.add"(%s, %s) : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 1], values = [1.620000e+02]
  %ch2 = corert.print_tensorhandle(%t, %ch1)
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'composite' returned !tfrt.chain value

// A function without chains, of two results.
// CHECK-LABEL: --- Running 'two_results'
func.func @two_results() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %a = corert.const_dense_tensor dense<[1, 2]> : tensor<2xi64>
  %op = "corert.make_composite_op"() {fn = @double_twice} : () -> !corert.op
  %r:2 = "corert.execute_crt_op"(%op, %a) {op_attrs = [], op_func_attrs = []} : (!corert.op, !corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [2], values = [2, 4]
  %ch1 = corert.print_tensorhandle(%r#0, %ch0)
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [2], values = [4, 8]
  %ch2 = corert.print_tensorhandle(%r#1, %ch1)
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'two_results' returned !tfrt.chain value

// A composite op with control flow whose result is set after the call
// returned.
// CHECK-LABEL: --- Running 'async_output'
func.func @async_output() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %true = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [1], values = [1 : i32]} : 1
  %op = "corert.make_composite_op"() {fn = @pick} : () -> !corert.op
  %r = "corert.execute_crt_op"(%op, %true) {op_attrs = [], op_func_attrs = []} : (!corert.op, !corert.tensorhandle) -> !corert.tensorhandle
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [10, 20]
  %ch1 = corert.print_tensorhandle(%r, %ch0)
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'async_output' returned !tfrt.chain value

// Errors: a signature that does not fit, and an error inside the op, which
// its results carry.
// CHECK-LABEL: --- Running 'errors'
func.func @errors() -> (!corert.tensorhandle, !corert.tensorhandle) {
  %a = corert.const_dense_tensor dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %op = "corert.make_composite_op"() {fn = @square} : () -> !corert.op
  // CHECK-NEXT: composite_ops.mlir:[[@LINE+2]]:8: error: runtime error: 'corert.execute_crt_op' passes 2 tensor handles and expects 1 result, but composite op @square takes 2 arguments and returns 2 (a leading !tfrt.chain in and out is also accepted)
  // expected-error @+1 {{'corert.execute_crt_op' passes 2 tensor handles and expects 1 result, but composite op @square takes 2 arguments and returns 2}}
  %r = "corert.execute_crt_op"(%op, %a, %a) {op_attrs = []} : (!corert.op, !corert.tensorhandle, !corert.tensorhandle) -> !corert.tensorhandle
  // The matmul of [1, 2] by itself fails inside @square, where it is reported.
  // CHECK-NEXT: composite_ops.mlir:11:8: error: runtime error: tfrt_test.matmul: matmul arguments have incompatible shapes
  %s = "corert.execute_crt_op"(%op, %a) {op_attrs = []} : (!corert.op, !corert.tensorhandle) -> !corert.tensorhandle
  tfrt.return %r, %s : !corert.tensorhandle, !corert.tensorhandle
}
// CHECK-NEXT: 'errors' returned <<error: 'corert.execute_crt_op' passes 2 tensor handles{{.*}}>>,<<error: tfrt_test.matmul: matmul arguments have incompatible shapes>>
