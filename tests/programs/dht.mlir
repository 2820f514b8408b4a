// TFRT's dense host tensor kernels (tfrt_dht): tensors made, written in
// place, compared and printed, the host buffers under them, and the
// conversions between tensor handles and them.
// RUN: not loom run %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'fill_and_print'
func.func @fill_and_print() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %m = tfrt_dht.create_uninitialized_tensor.i64.2 [2 : i64, 3 : i64]
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [2, 3], values = [0, 0, 0, 0, 0, 0]
  %ch1 = tfrt_dht.print_tensor %m, %ch0
  %ch2 = tfrt_dht.fill_tensor_with_constant.i64 %m, %ch1 -7 : i64
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [2, 3], values = [-7, -7, -7, -7, -7, -7]
  %ch3 = tfrt_dht.print_tensor %m, %ch2
  %s = tfrt_dht.create_uninitialized_tensor.f32.0 []
  %ch4 = tfrt_dht.fill_tensor_with_constant.f32 %s, %ch3 2.5 : f32
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [], values = [2.500000e+00]
  %ch5 = tfrt_dht.print_tensor %s, %ch4
  %u = tfrt_dht.create_uninitialized_tensor.ui8.1 [4 : i64]
  %ch6 = tfrt_dht.set_tensor_with_constant_values.ui8 %u, %ch5 [0 : ui8, 1 : ui8, 254 : ui8, 255 : ui8]
  // CHECK-NEXT: DenseHostTensor dtype = u8, shape = [4], values = [0, 1, 254, 255]
  %ch7 = tfrt_dht.print_tensor %u, %ch6
  %b = tfrt_dht.create_uninitialized_tensor.bool.1 [3 : i64]
  %ch8 = tfrt_dht.set_tensor_with_constant_values.bool %b, %ch7 [true, false, true]
  // CHECK-NEXT: DenseHostTensor dtype = i1, shape = [3], values = [1, 0, 1]
  %ch9 = tfrt_dht.print_tensor %b, %ch8
  // CHECK-NEXT: [2, 3]
  %ch10 = tfrt_dht.print_tensor_shape %m, %ch9
  %shape = tfrt_dht.get_tensor_shape %m
  // CHECK-NEXT: shape = [2, 3]
  ts.print_shape %shape, %ch10
  tfrt.return %ch10 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'set_with_values'
func.func @set_with_values() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %x = tfrt.constant.f64 0.25
  %y = tfrt.constant.f64 -8.0
  %t = "tfrt_dht.create_uninitialized_tensor.f64.1"() {shape = [2 : i64]} : () -> !t.tensor
  %ch1 = "tfrt_dht.set_tensor_with_values.f64"(%t, %ch0, %x, %y)
      : (!t.tensor, !tfrt.chain, f64, f64) -> !tfrt.chain
  // CHECK-NEXT: DenseHostTensor dtype = f64, shape = [2], values = [2.500000e-01, -8.000000e+00]
  %ch2 = "tfrt_dht.print_tensor"(%t, %ch1) : (!t.tensor, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}

// 1.0f and the floats 2 and 3 units in the last place above it.
// CHECK-LABEL: --- Running 'compare'
// CHECK-NEXT: int1 = 1
// CHECK-NEXT: int1 = 0
// CHECK-NEXT: int1 = 0
// CHECK-NEXT: int1 = 1
// CHECK-NEXT: int1 = 0
// CHECK-NEXT: int1 = 1
// CHECK-NEXT: int1 = 0
func.func @compare() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %one = tfrt_dht.create_uninitialized_tensor.f32.1 [2 : i64]
  %c1 = tfrt_dht.fill_tensor_with_constant.f32 %one, %ch0 1.0 : f32
  %two = tfrt_dht.create_uninitialized_tensor.f32.1 [2 : i64]
  %c2 = tfrt_dht.set_tensor_with_constant_values.f32 %two, %c1 [1.0 : f32, 0x3F800002 : f32]
  %three = tfrt_dht.create_uninitialized_tensor.f32.1 [2 : i64]
  %c3 = tfrt_dht.set_tensor_with_constant_values.f32 %three, %c2 [0x3F800003 : f32, 1.0 : f32]
  %e0, %d0 = tfrt_dht.tensor_equal.f32 %one, %one, %c3
  %p0 = tfrt.print.i1 %e0, %d0
  %e1, %d1 = tfrt_dht.tensor_equal.f32 %one, %two, %p0
  %p1 = tfrt.print.i1 %e1, %d1
  // Default tolerance: 2 ULPs.
  %e2, %d2 = tfrt_dht.tensor_allclose.f32 %one, %three, %p1
  %p2 = tfrt.print.i1 %e2, %d2
  %e3, %d3 = tfrt_dht.tensor_allclose.f32 %one, %two, %p2
  %p3 = tfrt.print.i1 %e3, %d3
  // Shapes differ.
  %short = tfrt_dht.create_uninitialized_tensor.f32.1 [1 : i64]
  %c4 = tfrt_dht.fill_tensor_with_constant.f32 %short, %p3 1.0 : f32
  %e4, %d4 = tfrt_dht.tensor_allclose.3ulp.f32 %one, %short, %c4
  %p4 = tfrt.print.i1 %e4, %d4
  %e5, %d5 = tfrt_dht.tensor_allclose.3ulp.f32 %one, %three, %p4
  %p5 = tfrt.print.i1 %e5, %d5
  %i = tfrt_dht.create_uninitialized_tensor.i32.1 [2 : i64]
  %j = tfrt_dht.create_uninitialized_tensor.i32.1 [2 : i64]
  %c6 = tfrt_dht.set_tensor_with_constant_values.i32 %j, %p5 [0 : i32, 1 : i32]
  %e6, %d6 = tfrt_dht.tensor_equal.i32 %i, %j, %c6
  %p6 = tfrt.print.i1 %e6, %d6
  tfrt.return %p6 : !tfrt.chain
}

// A tensor's buffer, a buffer's slices, and tensors made on them: writing
// through one view shows in the others.
// CHECK-LABEL: --- Running 'buffers'
// CHECK-NEXT: HostBuffer<pointer=0x{{[0-9a-f]+}}, size=24>
// CHECK-NEXT: DenseHostTensor dtype = i32, shape = [3, 2], values = [5, 5, 5, 5, 5, 5]
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [1.000000e+00, 1.000000e+00]
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 1], values = [2.000000e+00]
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [1.000000e+00, 2.000000e+00]
func.func @buffers() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %a = tfrt_dht.create_uninitialized_tensor.i32.2 [2 : i64, 3 : i64]
  %c1 = tfrt_dht.fill_tensor_with_constant.i32 %a, %ch0 5 : i32
  %buf, %c2 = tfrt_dht.get_buffer %a, %c1
  %c3 = tfrt_dht.print_buffer %buf, %c2
  %shape = ts.build_shape [3 : i64, 2 : i64]
  %b, %c4 = tfrt_dht.make_tensor.i32 %buf, %shape, %c3
  %c5 = tfrt_dht.print_tensor %b, %c4

  %size = tfrt.constant.i64 12
  %align = tfrt.constant.i64 8
  %raw = tfrt_dht.allocate_buffer %size, %align
  %zero = tfrt.constant.i64 0
  %four = tfrt.constant.i64 4
  %eight = tfrt.constant.i64 8
  %front = tfrt_dht.get_buffer_slice %raw, %zero, %eight
  %pair = ts.build_shape [2 : i64]
  %x, %c6 = tfrt_dht.make_tensor.f32 %front, %pair, %c5
  %c7 = tfrt_dht.fill_tensor_with_constant.f32 %x, %c6 1.0 : f32
  %c8 = tfrt_dht.print_tensor %x, %c7
  %middle = tfrt_dht.get_buffer_slice %raw, %four, %four
  %one_by_one = ts.build_shape [1 : i64, 1 : i64]
  %y, %c9 = tfrt_dht.make_tensor.f32 %middle, %one_by_one, %c8
  %c10 = tfrt_dht.fill_tensor_with_constant.f32 %y, %c9 2.0 : f32
  %c11 = tfrt_dht.print_tensor %y, %c10
  %c12 = tfrt_dht.print_tensor %x, %c11
  tfrt.return %c12 : !tfrt.chain
}

// A tensor handle's tensor is copied out: writing the copy leaves the
// program's constant alone.
// CHECK-LABEL: --- Running 'tensor_handles'
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [3.000000e+00, 3.000000e+00]
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [1.000000e+00, 2.000000e+00]
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [6.000000e+00, 6.000000e+00]
func.func @tensor_handles() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %h = corert.const_dense_tensor dense<[1.0, 2.0]> : tensor<2xf32>
  %t = "corert.tensorhandle_to_ht"(%h, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !t.tensor
  %c1 = tfrt_dht.fill_tensor_with_constant.f32 %t, %ch0 3.0 : f32
  %c2 = tfrt_dht.print_tensor %t, %c1
  %c3 = corert.print_tensorhandle(%h, %c2)
  %back = "corert.ht_to_tensorhandle"(%t, %c3) : (!t.tensor, !tfrt.chain) -> !corert.tensorhandle
  %sum = corert.executeop(%cpu) "tf.AddV2"(%back, %back) : 1
  %c4 = corert.print_tensorhandle(%sum, %c3)
  tfrt.return %c4 : !tfrt.chain
}

// tfrt_dht_sync: the same kernels in a function without chains, each
// done before the next starts.
// CHECK-LABEL: --- Running 'sync_tensors'
// CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 2], values = [4, -3, 2, -1]
// CHECK-NEXT: [2, 2]
// CHECK-NEXT: HostBuffer<pointer=0x{{[0-9a-f]+}}, size=4>
func.func @sync_tensors() attributes {tfrt.sync} {
  %t = tfrt_dht_sync.create_uninitialized_tensor.i32.2 [2 : i64, 2 : i64]
  tfrt_dht_sync.set_tensor_with_constant_values.i32 %t [4 : i32, -3 : i32, 2 : i32, -1 : i32]
  tfrt_dht_sync.print_tensor %t
  %shape = tfrt_dht_sync.get_tensor_shape %t
  %ch = tfrt.new.chain
  %ch0 = "tfrt_dht.print_tensor_shape"(%shape, %ch) : (!ts.shape, !tfrt.chain) -> !tfrt.chain
  %size = tfrt.constant.i64 16
  %align = tfrt.constant.i64 16
  %four = tfrt.constant.i64 4
  %buf = tfrt_dht_sync.allocate_buffer %size, %align
  %slice = tfrt_dht_sync.get_buffer_slice %buf, %four, %four
  %ch1 = tfrt_dht.print_buffer %slice, %ch0
  tfrt.return
}

// tfrt_dht_sync's constructors: a dense tensor from its values (one value
// fills it), a scalar host tensor, and a tensor over a buffer.
// CHECK-LABEL: --- Running 'sync_create'
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]
// CHECK-NEXT: DenseHostTensor dtype = i64, shape = [3], values = [7, 7, 7]
// CHECK-NEXT: DenseHostTensor dtype = i32, shape = [], values = [5]
// CHECK-NEXT: ScalarHostTensor dtype = f32, shape = [2, 3], value = 1.500000e+00
// CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [0, 0]
func.func @sync_create() attributes {tfrt.sync} {
  %a = "tfrt_dht_sync.create_dense_tensor.f32"()
      {shape = [2, 2], values = [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32]} : () -> !t.tensor
  tfrt_dht_sync.print_tensor %a
  %b = "tfrt_dht_sync.create_dense_tensor.i64"()
      {shape = [3], values = [7 : i64]} : () -> !t.tensor
  tfrt_dht_sync.print_tensor %b
  %c = "tfrt_dht_sync.create_dense_tensor.i32"()
      {shape = [], values = [5 : i32]} : () -> !t.tensor
  tfrt_dht_sync.print_tensor %c
  %s = "tfrt_dht_sync.create_from_scalar.f32"()
      {shape = [2, 3], value = 1.5 : f32} : () -> !t.tensor
  tfrt_dht_sync.print_tensor %s
  %size = tfrt.constant.i64 8
  %align = tfrt.constant.i64 8
  %buf = tfrt_dht_sync.allocate_buffer %size, %align
  %pair = ts.build_shape [2 : i64]
  %m = tfrt_dht_sync.make_tensor.i32 %buf, %pair
  tfrt_dht_sync.print_tensor %m
  tfrt.return
}

// CHECK-LABEL: --- Running 'sync_create_errors'
// CHECK: dht.mlir:[[@LINE+8]]:8: error: runtime error: 'tfrt_dht_sync.create_dense_tensor.f32': Incorrect number of values for the tensor: 3, but expected 4
// CHECK: dht.mlir:[[@LINE+9]]:8: error: runtime error: 'tfrt_dht_sync.make_tensor.f32': tfrt_dht_sync.make_tensor failed: buffer_size (8) is not equal to the number of elements in shape ([3]) times element size (4)
// CHECK: 'sync_create_errors' returned
func.func @sync_create_errors() -> (!t.tensor, !t.tensor) attributes {tfrt.sync} {
  %size = tfrt.constant.i64 8
  %align = tfrt.constant.i64 8
  %buf = tfrt_dht_sync.allocate_buffer %size, %align
  %three = ts.build_shape [3 : i64]
  %a = "tfrt_dht_sync.create_dense_tensor.f32"()
      {shape = [2, 2], values = [1.0 : f32, 2.0 : f32, 3.0 : f32]} : () -> !t.tensor
  %m = tfrt_dht_sync.make_tensor.f32 %buf, %three
  tfrt.return %a, %m : !t.tensor, !t.tensor
}

// CHECK-LABEL: --- Running 'errors'
// CHECK: dht.mlir:[[@LINE+10]]:9: error: runtime error: 'tfrt_dht.set_tensor_with_constant_values.i32': Incorrect number of values for the tensor: 2, but expected 3
// CHECK: dht.mlir:[[@LINE+10]]:9: error: runtime error: 'tfrt_dht.fill_tensor_with_constant.f32': argument 0 is a tensor of int32, expected float
// CHECK: dht.mlir:[[@LINE+16]]:13: error: runtime error: 'tfrt_dht.make_tensor.f32': dht.make_tensor failed: buffer_size (12) is not equal to the number of elements in shape ([2, 2]) times element size (4)
// CHECK: dht.mlir:[[@LINE+16]]:8: error: runtime error: 'tfrt_dht.get_buffer_slice': the slice [8, 8 + 8) is out of the buffer's 12 bytes
// CHECK: dht.mlir:[[@LINE+16]]:8: error: runtime error: 'tfrt_dht.create_uninitialized_tensor.i32.2': shape [4] has rank 1, expected 2
// CHECK: dht.mlir:[[@LINE+16]]:10: error: runtime error: 'tfrt_dht.allocate_buffer': the alignment must be a power of two of at most 4096, got 3
// CHECK: 'errors' returned
func.func @errors() -> (!tfrt.chain, !tfrt.chain, !tfrt.chain, !ht.host_buffer, !t.tensor, !ht.host_buffer) {
  %ch0 = tfrt.new.chain
  %t = tfrt_dht.create_uninitialized_tensor.i32.1 [3 : i64]
  %c1 = tfrt_dht.set_tensor_with_constant_values.i32 %t, %ch0 [1 : i32, 2 : i32]
  %c2 = tfrt_dht.fill_tensor_with_constant.f32 %t, %ch0 1.0 : f32
  %size = tfrt.constant.i64 12
  %align = tfrt.constant.i64 4
  %three = tfrt.constant.i64 3
  %eight = tfrt.constant.i64 8
  %raw = tfrt_dht.allocate_buffer %size, %align
  %square = ts.build_shape [2 : i64, 2 : i64]
  %m, %c3 = tfrt_dht.make_tensor.f32 %raw, %square, %ch0
  %s = tfrt_dht.get_buffer_slice %raw, %eight, %eight
  %r = "tfrt_dht.create_uninitialized_tensor.i32.2"() {shape = [4 : i64]} : () -> !t.tensor
  %bad = tfrt_dht.allocate_buffer %size, %three
  tfrt.return %c1, %c2, %c3, %s, %r, %bad : !tfrt.chain, !tfrt.chain, !tfrt.chain, !ht.host_buffer, !t.tensor, !ht.host_buffer
}
