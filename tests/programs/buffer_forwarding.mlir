// An op may reuse (forward) the buffer of an argument that no later
// operation reads and nothing else holds, as TFRT's CPU ops do; an argument
// read again later keeps its buffer. tfrt_test.print_address shows where a
// tensor's values are.
// RUN: loom run --plugin %tfrt_test_ops %s | FileCheck %s

// CHECK-LABEL: --- Running 'unary_last_use'
func.func @unary_last_use() {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [4], values = [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32]} : 1
  // CHECK-NEXT: DenseHostTensor: buffer=[[X:0x[0-9a-f]+]]
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print_address"(%x) : 0
  %ch2, %y = corert.executeop.seq(%cpu, %ch1) "tf.Sqrt"(%x) : 1
  // CHECK-NEXT: DenseHostTensor: buffer=[[X]]
  %ch3 = corert.executeop.seq(%cpu, %ch2) "tfrt_test.print_address"(%y) : 0
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [4], values = [1.000000e+00, 1.414214e+00, 1.732051e+00, 2.000000e+00]
  %ch4 = corert.print_tensorhandle(%y, %ch3)
  tfrt.return
}

// %x is read again after the first Sqrt: that one writes a new buffer, and
// %x keeps its values.
// CHECK-LABEL: --- Running 'unary_read_again'
func.func @unary_read_again() {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2], values = [4.0 : f32, 9.0 : f32]} : 1
  // CHECK-NEXT: DenseHostTensor: buffer=[[X:0x[0-9a-f]+]]
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print_address"(%x) : 0
  %ch2, %y = corert.executeop.seq(%cpu, %ch1) "tf.Sqrt"(%x) : 1
  // CHECK-NOT: buffer=[[X]]
  // CHECK:     DenseHostTensor: buffer=
  %ch3 = corert.executeop.seq(%cpu, %ch2) "tfrt_test.print_address"(%y) : 0
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [4.000000e+00, 9.000000e+00]
  %ch4 = corert.print_tensorhandle(%x, %ch3)
  tfrt.return
}

// A binary op reuses whichever argument is not read later: the right one
// here.
// CHECK-LABEL: --- Running 'binary_rhs'
func.func @binary_rhs() {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2], values = [2.0 : f32, 3.0 : f32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2], values = [5.0 : f32, 7.0 : f32]} : 1
  // CHECK-NEXT: DenseHostTensor: buffer=[[B:0x[0-9a-f]+]]
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print_address"(%b) : 0
  %ch2, %c = corert.executeop.seq(%cpu, %ch1) "tf.Mul"(%a, %b) : 1
  // CHECK-NEXT: DenseHostTensor: buffer=[[B]]
  %ch3 = corert.executeop.seq(%cpu, %ch2) "tfrt_test.print_address"(%c) : 0
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [2.000000e+00, 3.000000e+00]
  %ch4 = corert.print_tensorhandle(%a, %ch3)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [1.000000e+01, 2.100000e+01]
  %ch5 = corert.print_tensorhandle(%c, %ch4)
  tfrt.return
}

// The same value twice, a function's argument (its caller holds it), and a
// constant (its attribute holds the tensor) are never reused.
// CHECK-LABEL: --- Running 'never'
func.func @never() {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2], values = [2.0 : f32, 3.0 : f32]} : 1
  // CHECK-NEXT: DenseHostTensor: buffer=[[A:0x[0-9a-f]+]]
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print_address"(%a) : 0
  %ch2, %sq = corert.executeop.seq(%cpu, %ch1) "tf.Mul"(%a, %a) : 1
  // CHECK-NOT: buffer=[[A]]
  // CHECK:     DenseHostTensor: buffer=
  %ch3 = corert.executeop.seq(%cpu, %ch2) "tfrt_test.print_address"(%sq) : 0
  %k = corert.const_dense_tensor dense<[1.0, 4.0]> : tensor<2xf32>
  %ch4 = tfrt.call @log_of(%ch3, %k) : (!tfrt.chain, !corert.tensorhandle) -> !tfrt.chain
  // (Checked after @log_of's lines below.)
  %ch5 = corert.print_tensorhandle(%k, %ch4)
  tfrt.return
}

func.func @log_of(%ch0: !tfrt.chain, %x: !corert.tensorhandle) -> !tfrt.chain {
  %cpu = corert.get_op_handler %ch0 "cpu"
  // CHECK-NEXT: DenseHostTensor: buffer=[[K:0x[0-9a-f]+]]
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print_address"(%x) : 0
  %ch2, %y = corert.executeop.seq(%cpu, %ch1) "tf.Log"(%x) : 1
  // CHECK-NOT: buffer=[[K]]
  // CHECK:     DenseHostTensor: buffer=
  %ch3 = corert.executeop.seq(%cpu, %ch2) "tfrt_test.print_address"(%y) : 0
  tfrt.return %ch3 : !tfrt.chain
}
// The constant keeps its values.
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [1.000000e+00, 4.000000e+00]
