// f16 and bf16 in TFRT's test ops: tfrt_test.cast makes them, relu, add,
// matmul and argmax compute on them (rounding each result to the type, to
// nearest even), and print_tensorhandle prints their bits as TFRT does.
// Expected values from NumPy (f16) and PyTorch (bf16).
// RUN: not loom run --plugin %tfrt_test_ops --test_init_function=register %s 2>&1 | FileCheck %s
// RUN: loom run --plugin %tfrt_test_ops --test_init_function=register --verify-diagnostics %s

func.func @register() {
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  corert.register_op_handler %cpu "cpu16"
  tfrt.return
}

// CHECK-LABEL: --- Running 'relu_f16'
func.func @relu_f16() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu16"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [1, 1], values = [-1.0 : f32]} : 1
  %h = corert.executeop(%cpu) "tfrt_test.cast"(%a) {type = "f16"} : 1
  %r = corert.executeop(%cpu) "tfrt_test.relu"(%h) : 1
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [1, 1], values = [fp16(0)]
  %ch1 = "corert.print_tensorhandle"(%r, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %f = corert.executeop(%cpu) "tfrt_test.cast"(%r) {type = "f32"} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 1], values = [0.000000e+00]
  %ch2 = "corert.print_tensorhandle"(%f, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'relu_f16' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'math_f16'
func.func @math_f16() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu16"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2, 2], values = [-1.5 : f32, 0.1 : f32, 2.25 : f32, 1000.7 : f32]} : 1
  %h = corert.executeop(%cpu) "tfrt_test.cast"(%a) {type = "f16"} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [2, 2], values = [fp16(0), fp16(11878), fp16(16512), fp16(25553)]
  %r = corert.executeop(%cpu) "tfrt_test.relu"(%h) : 1
  %ch1 = corert.print_tensorhandle(%r, %ch0)
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [2, 2], values = [fp16(49664), fp16(12902), fp16(17536), fp16(26577)]
  %s = corert.executeop(%cpu) "tfrt_test.add"(%h, %h) : 1
  %ch2 = corert.print_tensorhandle(%s, %ch1)
  // 1000.7^2 overflows f16: +inf (31744).
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [2, 2], values = [fp16(16627), fp16(22078), fp16(26724), fp16(31744)]
  %m = corert.executeop(%cpu) "tfrt_test.matmul"(%h, %h)
      {transpose_a = false, transpose_b = false} : 1
  %ch3 = corert.print_tensorhandle(%m, %ch2)
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [1, 1]
  %x = corert.executeop(%cpu) "tfrt_test.argmax"(%h) {axis = 1 : i32} : 1
  %ch4 = corert.print_tensorhandle(%x, %ch3)
  // tfrt_test.print prints as print_tensorhandle does.
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [2, 2], values = [fp16(48640), fp16(11878), fp16(16512), fp16(25553)]
  %ch5 = corert.executeop.seq(%cpu, %ch4) "tfrt_test.print"(%h) : 0
  tfrt.return %ch5 : !tfrt.chain
}
// CHECK-NEXT: 'math_f16' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'math_bf16'
func.func @math_bf16() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu16"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2, 2], values = [-1.5 : f32, 0.1 : f32, 2.25 : f32, 1000.7 : f32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.cast"(%a) {type = "bf16"} : 1
  // CHECK-NEXT: DenseHostTensor dtype = bf16, shape = [2, 2], values = [bf16(49088), bf16(15821), bf16(16400), bf16(17530)]
  %ch1 = corert.print_tensorhandle(%b, %ch0)
  %m = corert.executeop(%cpu) "tfrt_test.matmul"(%b, %b)
      {transpose_a = true, transpose_b = false} : 1
  // CHECK-NEXT: DenseHostTensor dtype = bf16, shape = [2, 2], values = [bf16(16618), bf16(17677), bf16(17677), bf16(18804)]
  %ch2 = corert.print_tensorhandle(%m, %ch1)
  %f = corert.executeop(%cpu) "tfrt_test.cast"(%m) {type = "f32"} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [7.312500e+00, 2.256000e+03, 2.256000e+03, 9.994240e+05]
  %ch3 = corert.print_tensorhandle(%f, %ch2)
  tfrt.return %ch3 : !tfrt.chain
}
// CHECK-NEXT: 'math_bf16' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'cast_error'
func.func @cast_error() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu16"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [1], values = [1.0 : f32]} : 1
  // CHECK-NEXT: half_types.mlir:[[@LINE+2]]:8: error: runtime error: tfrt_test.cast: only casting to f32, f16 and bf16 is supported, got type = "i8"
  // expected-error @+1 {{tfrt_test.cast: only casting to f32, f16 and bf16 is supported, got type = "i8"}}
  %x = corert.executeop(%cpu) "tfrt_test.cast"(%a) {type = "i8"} : 1
  tfrt.return %x : !corert.tensorhandle
}
// CHECK-NEXT: 'cast_error' returned <<error: tfrt_test.cast: only casting to f32, f16 and bf16 is supported, got type = "i8">>

// tfrt_dht tensors print the same way, dense and scalar; more than 16
// values end as TFRT's DenseHostTensor::Print ends them.
// CHECK-LABEL: --- Running 'dht_half_types'
func.func @dht_half_types() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %h = tfrt_dht.create_uninitialized_tensor.f16.1 [3 : i64]
  %ch1 = tfrt_dht.set_tensor_with_constant_values.f16 %h, %ch0
      [1.0 : f32, -0.5 : f32, 65504.0 : f32]
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [3], values = [fp16(15360), fp16(47104), fp16(31743)]
  %ch2 = tfrt_dht.print_tensor %h, %ch1
  %b = tfrt_dht.create_uninitialized_tensor.bf16.1 [17 : i64]
  %ch3 = tfrt_dht.fill_tensor_with_constant.bf16 %b, %ch2 1.0 : f32
  // CHECK-NEXT: DenseHostTensor dtype = bf16, shape = [17], values = [bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), bf16(16256), ... ]
  %ch4 = tfrt_dht.print_tensor %b, %ch3
  tfrt.return %ch4 : !tfrt.chain
}
// CHECK-NEXT: 'dht_half_types' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'dht_half_scalar'
// CHECK-NEXT: ScalarHostTensor dtype = f16, shape = [2], value = fp16(15872)
func.func @dht_half_scalar() attributes {tfrt.sync} {
  %s = "tfrt_dht_sync.create_from_scalar.f16"()
      {shape = [2], value = 1.5 : f32} : () -> !t.tensor
  tfrt_dht_sync.print_tensor %s
  tfrt.return
}
