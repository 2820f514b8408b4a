// TFRT's coo kernels: dense host tensors converted to sparse ones in
// coordinate form (CooHostTensor) and back, compared, and printed by
// tfrt_dht.print_tensor. Coordinates in TFRT's numbering and values from
// NumPy: np.unravel_index(np.flatnonzero(a), a.shape[::-1]) (the offset's
// digits with the dims first to last as radices, last coordinate first, as
// TFRT's kernel writes them) and a[a != 0].
// RUN: not loom run %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'round_trip_i32'
func.func @round_trip_i32() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %a = tfrt_dht.create_uninitialized_tensor.i32.2 [4 : i64, 3 : i64]
  %ch1 = tfrt_dht.set_tensor_with_constant_values.i32 %a, %ch0
      [0 : i32, 5 : i32, 0 : i32, -3 : i32, 0 : i32, 0 : i32,
       0 : i32, 0 : i32, 7 : i32, 0 : i32, 2 : i32, 0 : i32]
  %s, %ch2 = coo.convert_dht_to_coo.i32.2 %a, %ch1
  // Not row-major for a shape that is not square: TFRT's numbering.
  // CHECK-NEXT: CooHostTensor dtype = i32, shape = [4, 3], indices = [0, 1, 0, 3, 2, 0, 2, 2], values = [5, -3, 7, 2]
  %ch3 = tfrt_dht.print_tensor %s, %ch2
  %d, %ch4 = coo.convert_coo_to_dht.i32.2 %s, %ch3
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [4, 3], values = [0, 5, 0, -3, 0, 0, 0, 0, 7, 0, 2, 0]
  %ch5 = tfrt_dht.print_tensor %d, %ch4
  %same, %ch6 = tfrt_dht.tensor_equal.i32 %a, %d, %ch5
  // CHECK-NEXT: int1 = 1
  %ch7 = "tfrt.print.i1"(%same, %ch6) : (i1, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch7 : !tfrt.chain
}

// TFRT's own case: a [3, 2] tensor of fours.
// CHECK-LABEL: --- Running 'tfrt_numbering'
func.func @tfrt_numbering() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %a = tfrt_dht.create_uninitialized_tensor.i32.2 [3 : i64, 2 : i64]
  %ch1 = tfrt_dht.fill_tensor_with_constant.i32 %a, %ch0 4 : i32
  %s, %ch2 = coo.convert_dht_to_coo.i32.2 %a, %ch1
  // CHECK-NEXT: CooHostTensor dtype = i32, shape = [3, 2], indices = [0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2], values = [4, 4, 4, 4, 4, 4]
  %ch3 = tfrt_dht.print_tensor %s, %ch2
  %d, %ch4 = coo.convert_coo_to_dht.i32.2 %s, %ch3
  %same, %ch5 = tfrt_dht.tensor_equal.i32 %a, %d, %ch4
  // CHECK-NEXT: int1 = 1
  %ch6 = "tfrt.print.i1"(%same, %ch5) : (i1, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch6 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'floats_and_ranks'
func.func @floats_and_ranks() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %f = tfrt_dht.create_uninitialized_tensor.f32.2 [2 : i64, 2 : i64]
  %ch1 = tfrt_dht.set_tensor_with_constant_values.f32 %f, %ch0
      [1.5 : f32, 0.0 : f32, -0.0 : f32, -2.25 : f32]
  %sf, %ch2 = coo.convert_dht_to_coo.f32.2 %f, %ch1
  // -0.0 is a zero.
  // CHECK-NEXT: CooHostTensor dtype = f32, shape = [2, 2], indices = [0, 0, 1, 1], values = [1.500000e+00, -2.250000e+00]
  %ch3 = tfrt_dht.print_tensor %sf, %ch2
  %g = tfrt_dht.create_uninitialized_tensor.f64.3 [2 : i64, 3 : i64, 2 : i64]
  %ch4 = tfrt_dht.set_tensor_with_constant_values.f64 %g, %ch3
      [0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0]
  %sg, %ch5 = coo.convert_dht_to_coo.f64.3 %g, %ch4
  // CHECK-NEXT: CooHostTensor dtype = f64, shape = [2, 3, 2], indices = [0, 1, 1, 1, 2, 0], values = [-1.000000e+00, 5.000000e-01]
  %ch6 = tfrt_dht.print_tensor %sg, %ch5
  %dg, %ch7 = coo.convert_coo_to_dht.f64.3 %sg, %ch6
  // CHECK-NEXT: DenseHostTensor dtype = f64, shape = [2, 3, 2], values = [0.000000e+00, 0.000000e+00, 0.000000e+00, -1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, 0.000000e+00]
  %ch8 = tfrt_dht.print_tensor %dg, %ch7
  // f16 values print as their bits, as TFRT's do: 1.0 and -2.0.
  %h = tfrt_dht.create_uninitialized_tensor.f16.1 [4 : i64]
  %ch9 = tfrt_dht.set_tensor_with_constant_values.f16 %h, %ch8
      [0.0 : f32, 1.0 : f32, 0.0 : f32, -2.0 : f32]
  %sh, %ch10 = coo.convert_dht_to_coo.f16.1 %h, %ch9
  // CHECK-NEXT: CooHostTensor dtype = f16, shape = [4], indices = [1, 3], values = [fp16(15360), fp16(49152)]
  %ch11 = tfrt_dht.print_tensor %sh, %ch10
  // Rank 0: one element, no coordinates.
  %r = tfrt_dht.create_uninitialized_tensor.ui8.0 []
  %ch12 = tfrt_dht.fill_tensor_with_constant.ui8 %r, %ch11 200 : ui8
  %sr, %ch13 = coo.convert_dht_to_coo.ui8.0 %r, %ch12
  // CHECK-NEXT: CooHostTensor dtype = u8, shape = [], indices = [], values = [200]
  %ch14 = tfrt_dht.print_tensor %sr, %ch13
  // All zeros: nothing stored; back to dense, zeros.
  %z = tfrt_dht.create_uninitialized_tensor.i64.2 [2 : i64, 3 : i64]
  %sz, %ch15 = coo.convert_dht_to_coo.i64.2 %z, %ch14
  // CHECK-NEXT: CooHostTensor dtype = i64, shape = [2, 3], indices = [], values = []
  %ch16 = tfrt_dht.print_tensor %sz, %ch15
  %dz, %ch17 = coo.convert_coo_to_dht.i64.2 %sz, %ch16
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [2, 3], values = [0, 0, 0, 0, 0, 0]
  %ch18 = tfrt_dht.print_tensor %dz, %ch17
  tfrt.return %ch18 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'equal'
// CHECK-NEXT: int1 = 1
// CHECK-NEXT: int1 = 0
// CHECK-NEXT: int1 = 0
func.func @equal() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %a = tfrt_dht.create_uninitialized_tensor.f32.1 [3 : i64]
  %ch1 = tfrt_dht.set_tensor_with_constant_values.f32 %a, %ch0 [0.0 : f32, 4.0 : f32, 0.0 : f32]
  %b = tfrt_dht.create_uninitialized_tensor.f32.1 [3 : i64]
  %ch2 = tfrt_dht.set_tensor_with_constant_values.f32 %b, %ch1 [0.0 : f32, 4.5 : f32, 0.0 : f32]
  %c = tfrt_dht.create_uninitialized_tensor.f32.1 [3 : i64]
  %ch3 = tfrt_dht.set_tensor_with_constant_values.f32 %c, %ch2 [4.0 : f32, 0.0 : f32, 0.0 : f32]
  %sa, %ch4 = coo.convert_dht_to_coo.f32.1 %a, %ch3
  %sb, %ch5 = coo.convert_dht_to_coo.f32.1 %b, %ch4
  %sc, %ch6 = coo.convert_dht_to_coo.f32.1 %c, %ch5
  %da, %ch7 = coo.convert_coo_to_dht.f32.1 %sa, %ch6
  %sa2, %ch8 = coo.convert_dht_to_coo.f32.1 %da, %ch7
  %e1, %ch9 = coo.tensor_equal.f32.1 %sa, %sa2, %ch8
  %ch10 = "tfrt.print.i1"(%e1, %ch9) : (i1, !tfrt.chain) -> !tfrt.chain
  // Values differ.
  %e2, %ch11 = coo.tensor_equal.f32.1 %sa, %sb, %ch10
  %ch12 = "tfrt.print.i1"(%e2, %ch11) : (i1, !tfrt.chain) -> !tfrt.chain
  // Coordinates differ.
  %e3, %ch13 = coo.tensor_equal.f32.1 %sa, %sc, %ch12
  %ch14 = "tfrt.print.i1"(%e3, %ch13) : (i1, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch14 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'errors'
// CHECK: coo.mlir:[[@LINE+10]]:15: error: runtime error: 'coo.convert_dht_to_coo.i32.2': argument 0 has rank 1, expected 2
// CHECK: coo.mlir:[[@LINE+10]]:15: error: runtime error: 'coo.convert_dht_to_coo.f32.1': argument 0 is a tensor of int32, expected float
// CHECK: coo.mlir:[[@LINE+12]]:15: error: runtime error: 'coo.convert_coo_to_dht.i32.2': argument 0 has rank 1, expected 2
// CHECK: coo.mlir:[[@LINE+12]]:15: error: runtime error: 'coo.convert_coo_to_dht.f32.1': argument 0 is a tensor of int32, expected float
// CHECK: coo.mlir:[[@LINE+13]]:15: error: runtime error: 'coo.tensor_equal.i32.1': argument 1 is a dense host tensor, expected a COO tensor (from coo.convert_dht_to_coo)
// CHECK: coo.mlir:[[@LINE+14]]:15: error: runtime error: 'tfrt_dht.tensor_equal.i32': argument 0 is a COO tensor, expected a dense host tensor (from coo.convert_coo_to_dht)
// CHECK: 'errors' returned
func.func @errors() -> (!t.tensor, !t.tensor, !t.tensor, !t.tensor, i1, i1) {
  %ch0 = tfrt.new.chain
  %v = tfrt_dht.create_uninitialized_tensor.i32.1 [3 : i64]
  %e1, %ch1 = coo.convert_dht_to_coo.i32.2 %v, %ch0
  %e2, %ch2 = coo.convert_dht_to_coo.f32.1 %v, %ch0
  %s, %ch3 = coo.convert_dht_to_coo.i32.1 %v, %ch0
  // The coo tensor is rank 1, of int32.
  %e3, %ch4 = coo.convert_coo_to_dht.i32.2 %s, %ch3
  %e4, %ch5 = coo.convert_coo_to_dht.f32.1 %s, %ch3
  // A dense tensor is not a coo tensor.
  %e5, %ch6 = coo.tensor_equal.i32.1 %s, %v, %ch3
  // A coo tensor is not a dense one.
  %e6, %ch7 = tfrt_dht.tensor_equal.i32 %s, %v, %ch3
  tfrt.return %e1, %e2, %e3, %e4, %e5, %e6
      : !t.tensor, !t.tensor, !t.tensor, !t.tensor, i1, i1
}
