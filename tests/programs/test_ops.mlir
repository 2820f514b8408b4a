// TFRT's test ops (tfrt_test.*), from the test-op plugin, run through
// corert.executeop on the cpu handler: metadata functions, scalar and dense
// host tensors, side effects ordered by chains (through calls too),
// asynchronous dispatch and data-dependent shapes.
// RUN: loom run --plugin %tfrt_test_ops %s | FileCheck %s

// CHECK-LABEL: --- Running 'create'
func.func @create() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 3], values = [1.000000e+00, 2.000000e+00, 3.000000e+00]
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [1, 3], values = [1.0 : f32, 2.0 : f32, 3.0 : f32]} : 1
  %ch1 = corert.print_tensorhandle(%a, %ch0)
  // One value fills the shape.
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [2, 2], values = [7, 7, 7, 7]
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2, 2], values = [7]} : 1
  %ch2 = corert.print_tensorhandle(%b, %ch1)
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [2, 2], value = 1
  %c = corert.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [2 : i64, 2 : i64], value = 1 : i32} : 1
  %ch3 = corert.print_tensorhandle(%c, %ch2)
  tfrt.return %ch3 : !tfrt.chain
}
// CHECK-NEXT: 'create' returned !tfrt.chain value

// tfrt_test.add keeps scalar host tensors scalar; add.denseonly gets dense
// ones (the cpu handler converts them).
// CHECK-LABEL: --- Running 'scalar_and_dense'
func.func @scalar_and_dense() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [2, 2], value = 3 : i32} : 1
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [2, 2], value = 6
  %b = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %ch1 = corert.print_tensorhandle(%b, %ch0)
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 2], values = [6, 6, 6, 6]
  %c = corert.executeop(%cpu) "tfrt_test.add.denseonly"(%a, %a) : 1
  %ch2 = corert.print_tensorhandle(%c, %ch1)
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 2], values = [9, 9, 9, 9]
  %d = corert.executeop(%cpu) "tfrt_test.add"(%c, %a) : 1
  %ch3 = corert.print_tensorhandle(%d, %ch2)
  tfrt.return %ch3 : !tfrt.chain
}
// CHECK-NEXT: 'scalar_and_dense' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'math'
func.func @math() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2, 3], values = [1.0 : f32, -2.0 : f32, 3.0 : f32, -4.0 : f32, 5.0 : f32, -6.0 : f32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [3, 2], values = [1.0 : f32, 0.0 : f32, 0.0 : f32, 1.0 : f32, 1.0 : f32, 1.0 : f32]} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [4.000000e+00, 1.000000e+00, -1.000000e+01, -1.000000e+00]
  %m = corert.executeop(%cpu) "tfrt_test.matmul"(%a, %b)
      {transpose_a = false, transpose_b = false} : 1
  %ch1 = corert.print_tensorhandle(%m, %ch0)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.400000e+01, -3.200000e+01, -3.200000e+01, 7.700000e+01]
  %g = corert.executeop(%cpu) "tfrt_test.matmul"(%a, %a)
      {transpose_a = false, transpose_b = true} : 1
  %ch2 = corert.print_tensorhandle(%g, %ch1)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 3], values = [1.000000e+00, 0.000000e+00, 3.000000e+00, 0.000000e+00, 5.000000e+00, 0.000000e+00]
  %r = corert.executeop(%cpu) "tfrt_test.relu"(%a) : 1
  %ch3 = corert.print_tensorhandle(%r, %ch2)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 3], values = [1.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00]
  %e = corert.executeop(%cpu) "tfrt_test.equal"(%a, %r) : 1
  %ch4 = corert.print_tensorhandle(%e, %ch3)
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [2, 1]
  %x = corert.executeop(%cpu) "tfrt_test.argmax"(%a) {axis = 1 : i32} : 1
  %ch5 = corert.print_tensorhandle(%x, %ch4)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [3], values = [-1.500000e+00, 1.500000e+00, -1.500000e+00]
  %y = corert.executeop(%cpu) "tfrt_test.reduce_mean"(%a) {axis = 0 : i32} : 1
  %ch6 = corert.print_tensorhandle(%y, %ch5)
  %i = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [3], values = [1 : i32, 2 : i32, 3 : i32]} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [3], values = [1.000000e+00, 2.000000e+00, 3.000000e+00]
  %f = corert.executeop(%cpu) "tfrt_test.cast"(%i) {type = "f32"} : 1
  %ch7 = corert.print_tensorhandle(%f, %ch6)
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [3], values = [fp16(15360), fp16(16384), fp16(16896)]
  %h = corert.executeop(%cpu) "tfrt_test.cast"(%i) {type = "f16"} : 1
  %ch8 = corert.print_tensorhandle(%h, %ch7)
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 3], values = [1, 2, 3, 1, 2, 3]
  %z = corert.executeop(%cpu) "tfrt_test.broadcast"(%i) {shape = [2, 3]} : 1
  %ch9 = corert.print_tensorhandle(%z, %ch8)
  tfrt.return %ch9 : !tfrt.chain
}
// CHECK-NEXT: 'math' returned !tfrt.chain value

// tfrt_test.print has a side effect: corert.executeop.seq orders it with
// chains, here in the opposite order of the values' creation.
// CHECK-LABEL: --- Running 'ordered_prints'
func.func @ordered_prints() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [1], value = 1 : i32} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [1], value = 2 : i32} : 1
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [1], value = 2
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [1], value = 1
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print"(%b) : 0
  %ch2 = corert.executeop.seq(%cpu, %ch1) "tfrt_test.print"(%a) : 0
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'ordered_prints' returned !tfrt.chain value

// Results of ops that finish on the thread pool become available later;
// the kernels that use them wait, and the chain keeps the prints in order.
// CHECK-LABEL: --- Running 'asynchronous'
func.func @asynchronous() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [2, 2], value = 1 : i32} : 1
  %b = corert.executeop(%cpu) "tfrt_test.async.noop"(%a) : 1
  %c = corert.executeop(%cpu) "tfrt_test.add"(%b, %b) : 1
  %d = corert.executeop(%cpu) "tfrt_test.async.noop_no_md"(%c) : 1
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [2, 2], value = 2
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [2, 2], value = 1
  %ch1 = corert.print_tensorhandle(%d, %ch0)
  %ch2 = corert.executeop.seq(%cpu, %ch1) "tfrt_test.print"(%b) : 0
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'asynchronous' returned !tfrt.chain value

// tfrt_test.odd_collector has no metadata function: its shape depends on
// the data. tfrt_test.identity passes its input on.
// CHECK-LABEL: --- Running 'data_dependent'
func.func @data_dependent() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [5], values = [1 : i32, 2 : i32, 3 : i32, 4 : i32, 5 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.odd_collector"(%a) : 1
  %c = corert.executeop(%cpu) "tfrt_test.identity"(%b) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [3], values = [1, 3, 5]
  %ch1 = corert.print_tensorhandle(%c, %ch0)
  // CHECK-NEXT: shape = [3]
  %s = corert.tensorhandle_to_shape %c
  %ch2 = "ts.print_shape"(%s, %ch1) : (!ts.shape, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'data_dependent' returned !tfrt.chain value

// tensorhandle_to_int32 reads a computed value back.
// CHECK-LABEL: --- Running 'to_int32'
func.func @to_int32() -> i32 {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [], value = 20 : i32} : 1
  %b = corert.executeop(%cpu) "tfrt_test.async.noop"(%a) : 1
  %c = corert.executeop(%cpu) "tfrt_test.add"(%b, %a) : 1
  %n = corert.tensorhandle_to_int32 %c
  tfrt.return %n : i32
}
// CHECK-NEXT: 'to_int32' returned 40

// A stateful callee in the form trace printing writes it (loom/trace.h):
// it takes its caller's chain first, starts its stateful ops from it and
// returns the chain they end with first, so that prints keep their order
// across calls.
// CHECK-LABEL: --- Not running 'print_and_double' because it has arguments.
func.func @print_and_double(%ch0: !tfrt.chain, %arg0: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  %cpu = corert.get_op_handler %ch0 "cpu"
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print"(%arg0) : 0
  %n1_0 = corert.executeop(%cpu) "tfrt_test.add"(%arg0, %arg0) : 1
  %ch2 = corert.executeop.seq(%cpu, %ch1) "tfrt_test.print"(%n1_0) : 0
  tfrt.return %ch2, %n1_0 : !tfrt.chain, !corert.tensorhandle
}

// CHECK-LABEL: --- Running 'chained_calls'
func.func @chained_calls() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [1], value = 1 : i32} : 1
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [1], value = 1
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [1], value = 2
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [1], value = 2
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [1], value = 4
  %ch1, %b = tfrt.call @print_and_double(%ch0, %a) : (!tfrt.chain, !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle)
  %ch2, %c = tfrt.call @print_and_double(%ch1, %b) : (!tfrt.chain, !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle)
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'chained_calls' returned !tfrt.chain value
