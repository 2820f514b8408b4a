// The corert dialect's tensor kernels: constants (dense, string, typed),
// printing, conversions to i32 and shapes, and the ts dialect's shapes.
// RUN: loom run %s | FileCheck %s

// CHECK-LABEL: --- Running 'dense_constants'
func.func @dense_constants() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 2], values = [1, 2, 3, 4]
  %a = corert.const_dense_tensor dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %ch1 = corert.print_tensorhandle(%a, %ch0)
  // A splat fills the shape.
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [3], values = [1.500000e+00, 1.500000e+00, 1.500000e+00]
  %b = corert.const_dense_tensor dense<1.5> : tensor<3xf32>
  %ch2 = corert.print_tensorhandle(%b, %ch1)
  // CHECK-NEXT: DenseHostTensor dtype = i1, shape = [2], values = [1, 0]
  %c = corert.const_dense_tensor dense<[true, false]> : tensor<2xi1>
  %ch3 = corert.print_tensorhandle(%c, %ch2)
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [], values = [-7]
  %d = corert.const_dense_tensor dense<-7> : tensor<i64>
  %ch4 = corert.print_tensorhandle(%d, %ch3)
  // f16 and bf16 values print as their bits, as TFRT's fp16 and bf16 do.
  // CHECK-NEXT: DenseHostTensor dtype = bf16, shape = [2], values = [bf16(16256), bf16(49184)]
  %e = corert.const_dense_tensor dense<[1.0, -2.5]> : tensor<2xbf16>
  %ch5 = corert.print_tensorhandle(%e, %ch4)
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [2], values = [fp16(14336), fp16(31743)]
  %f = corert.const_dense_tensor dense<[0.5, 65504.0]> : tensor<2xf16>
  %ch6 = corert.print_tensorhandle(%f, %ch5)
  // CHECK-NEXT: DenseHostTensor dtype = u8, shape = [1, 3], values = [0, 128, 255]
  %g = corert.const_dense_tensor dense<[[0, 128, 255]]> : tensor<1x3xui8>
  %ch7 = corert.print_tensorhandle(%g, %ch6)
  // At most 16 values are printed, then TFRT's `, ... ]`.
  // CHECK-NEXT: DenseHostTensor dtype = f64, shape = [5, 4], values = [2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, ... ]
  %h = corert.const_dense_tensor dense<2.0> : tensor<5x4xf64>
  %ch8 = corert.print_tensorhandle(%h, %ch7)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [0], values = []
  %i = corert.const_dense_tensor dense<[]> : tensor<0xf32>
  %ch9 = corert.print_tensorhandle(%i, %ch8)
  tfrt.return %ch9 : !tfrt.chain
}
// CHECK-NEXT: 'dense_constants' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'string_constants'
func.func @string_constants() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: StringHostTensor shape = [2], values = ["hello", "world"]
  %a = corert.const_string_tensor {shape = [2], value = ["hello", "world"]}
  %ch1 = corert.print_tensorhandle(%a, %ch0)
  // One string fills the shape.
  // CHECK-NEXT: StringHostTensor shape = [1, 3], values = ["same", "same", "same"]
  %b = corert.const_string_tensor {shape = [1, 3], value = ["same"]}
  %ch2 = corert.print_tensorhandle(%b, %ch1)
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'string_constants' returned !tfrt.chain value

// corert.create_dense_tensor.<type> converts the values to the type.
// CHECK-LABEL: --- Running 'typed_tensors'
func.func @typed_tensors() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [3], values = [1, 2, 3]
  %a = corert.create_dense_tensor.i64 {shape = [3], value = [1, 2, 3]}
  %ch1 = corert.print_tensorhandle(%a, %ch0)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2], values = [1.000000e+00, 2.500000e+00]
  %b = corert.create_dense_tensor.f32 {shape = [1, 2], value = [1.0 : f32, 2.5 : f32]}
  %ch2 = corert.print_tensorhandle(%b, %ch1)
  // Unsigned dtypes print by TFRT's names (u8, u64).
  // CHECK-NEXT: DenseHostTensor dtype = u8, shape = [2, 2], values = [255, 255, 255, 255]
  %c = corert.create_dense_tensor.ui8 {shape = [2, 2], value = [255 : i32]}
  %ch3 = corert.print_tensorhandle(%c, %ch2)
  // CHECK-NEXT: DenseHostTensor dtype = bf16, shape = [1], values = [bf16(16128)]
  %d = corert.create_dense_tensor.bf16 {shape = [1], value = [0.5]}
  %ch4 = corert.print_tensorhandle(%d, %ch3)
  // CHECK-NEXT: DenseHostTensor dtype = i1, shape = [2], values = [1, 0]
  %e = corert.create_dense_tensor.i1 {shape = [2], value = [true, false]}
  %ch5 = corert.print_tensorhandle(%e, %ch4)
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [3], values = [fp16(14336), fp16(49152), fp16(31743)]
  %f = corert.create_dense_tensor.f16 {shape = [3], value = [0.5, -2.0, 65504.0]}
  %ch6 = corert.print_tensorhandle(%f, %ch5)
  // Every spelling of a dtype names it: si32 is i32.
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [-1, 7]
  %g = corert.create_dense_tensor.si32 {shape = [2], value = [-1, 7]}
  %ch7 = corert.print_tensorhandle(%g, %ch6)
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [2], values = [fp16(15872), fp16(13312)]
  %h = corert.const_dense_tensor dense<[1.5, 0.25]> : tensor<2xf16>
  %ch8 = corert.print_tensorhandle(%h, %ch7)
  // CHECK-NEXT: DenseHostTensor dtype = u64, shape = [1], values = [2]
  %u = corert.create_dense_tensor.ui64 {shape = [1], value = [2 : ui64]}
  %ch9 = corert.print_tensorhandle(%u, %ch8)
  // CHECK-NEXT: DenseHostTensor dtype = bf16, shape = [1], values = [bf16(16416)]
  %v = corert.create_dense_tensor.bf16 {shape = [1], value = [2.5 : bf16]}
  %ch10 = corert.print_tensorhandle(%v, %ch9)
  tfrt.return %ch10 : !tfrt.chain
}
// CHECK-NEXT: 'typed_tensors' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'conversions'
func.func @conversions() -> (i32, !ts.shape) {
  %ch0 = tfrt.new.chain
  %a = corert.const_dense_tensor dense<42> : tensor<i32>
  %n = corert.tensorhandle_to_int32 %a
  %b = corert.const_dense_tensor dense<0.0> : tensor<2x3xf32>
  // CHECK-NEXT: shape = [2, 3]
  %s = corert.tensorhandle_to_shape %b
  %ch1 = "ts.print_shape"(%s, %ch0) : (!ts.shape, !tfrt.chain) -> !tfrt.chain
  // TFRT's older form takes a chain too.
  // CHECK-NEXT: shape = []
  %t = "corert.tensorhandle_to_shape"(%a, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !ts.shape
  %ch2 = "ts.print_shape"(%t, %ch1) : (!ts.shape, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: shape = [1, 57, 92]
  %u = ts.build_shape [1 : i64, 57 : i64, 92 : i64]
  "ts.print_shape"(%u, %ch2) : (!ts.shape, !tfrt.chain) -> !tfrt.chain
  tfrt.return %n, %s : i32, !ts.shape
}
// CHECK-NEXT: 'conversions' returned 42,!ts.shape value
