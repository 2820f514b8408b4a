// The corert_sync dialect: TFRT's core runtime in functions without chains
// (`attributes {tfrt.sync}`). Its kernels return their values directly and
// the operations run in textual order; op handlers are found by name, also
// those a test init function registered (with either dialect).
// RUN: not loom run --plugin %tfrt_test_ops --test_init_function=register %s 2>&1 | FileCheck %s
// RUN: loom run --plugin %tfrt_test_ops --test_init_function=register --verify-diagnostics %s
// RUN: loom check --split-input-file --verify-diagnostics %S/inputs/corert_sync_errors.mlir

// CHECK-NOT: --- Running 'register'
func.func @register() {
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  corert_sync.register_op_handler %cpu "sync_cpu"
  %log = corert.create_logging_op_handler %cpu {sync_log_results = 0}
  "corert_sync.register_op_handler"(%log) {op_handler_name = "sync_log"} : (!corert.ophandler) -> ()
  tfrt.return
}

// CHECK-LABEL: --- Running 'matmul_sync'
func.func @matmul_sync() attributes {tfrt.sync} {
  %cpu = corert_sync.get_op_handler "sync_cpu"
  %a = corert_sync.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2, 2], values = [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32]} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]
  "corert_sync.print_tensorhandle"(%a) : (!corert.tensorhandle) -> ()
  %b = corert_sync.executeop(%cpu) "tfrt_test.matmul"(%a, %a)
      {transpose_a = false, transpose_b = true} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [5.000000e+00, 1.100000e+01, 1.100000e+01, 2.500000e+01]
  corert_sync.print_tensorhandle %b
  // Operations without a data dependence still run in order.
  %c = corert_sync.const_dense_tensor dense<[1, 2]> : tensor<2xi32>
  %d = corert_sync.create_dense_tensor.i64 {shape = [2], value = [5, 6]}
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [2], values = [5, 6]
  corert_sync.print_tensorhandle %d
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [1, 2]
  corert_sync.print_tensorhandle %c
  %e = corert_sync.executeop(%cpu) "tf.AddV2"(%d, %d) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [2], values = [10, 12]
  corert_sync.print_tensorhandle(%e)
  %f = corert_sync.create_dense_tensor.f16 {shape = [1], value = [0.5]}
  // CHECK-NEXT: DenseHostTensor dtype = f16, shape = [1], values = [fp16(14336)]
  corert_sync.print_tensorhandle %f
  tfrt.return
}
// CHECK-NOT: 'matmul_sync' returned

// An async op's result is awaited before the next operation runs.
// CHECK-LABEL: --- Running 'async_in_sync'
func.func @async_in_sync() attributes {tfrt.sync} {
  %cpu = corert_sync.get_op_handler "cpu"
  %a = corert_sync.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [2], value = 3 : i32} : 1
  %b = corert_sync.executeop(%cpu) "tfrt_test.async.noop"(%a) : 1
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [2], value = 3
  corert_sync.print_tensorhandle %b
  tfrt.return
}

// A registered logging handler, found by name.
// CHECK-LABEL: --- Running 'logging_sync'
func.func @logging_sync() attributes {tfrt.sync} {
  %log = corert_sync.get_op_handler "sync_log"
  // CHECK-NEXT: [0] dispatch 'tfrt_test.create_dense_tensor' 0 arguments, 1 result, OpAttrs contains 2 entries:
  %a = corert_sync.executeop(%log) "tfrt_test.create_dense_tensor"()
      {shape = [1], values = [7 : i32]} : 1
  // CHECK: DenseHostTensor dtype = i32, shape = [1], values = [7]
  corert_sync.print_tensorhandle %a
  tfrt.return
}

// The sync kernels also run in functions with chains, and their results
// feed the async ones.
// CHECK-LABEL: --- Running 'mixed'
func.func @mixed() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert_sync.get_op_handler "sync_cpu"
  %a = corert_sync.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [3], values = [1 : i32, 2 : i32, 3 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [3], values = [2, 4, 6]
  %ch1 = corert.print_tensorhandle(%b, %ch0)
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'mixed' returned !tfrt.chain value

// TFRT's error texts: a handler nobody registered, an op the handler does
// not support, an op's own error.
// CHECK-LABEL: --- Running 'errors_sync'
func.func @errors_sync() attributes {tfrt.sync} {
  // CHECK-NEXT: corert_sync.mlir:[[@LINE+2]]:10: error: runtime error: op_handler not found: gpu
  // expected-error @+1 {{op_handler not found: gpu}}
  %gpu = corert_sync.get_op_handler "gpu"
  %cpu = corert_sync.get_op_handler "sync_cpu"
  // CHECK-NEXT: corert_sync.mlir:[[@LINE+2]]:8: error: runtime error: tf.invalidop was not supported by NullOpHandler
  // expected-error @+1 {{tf.invalidop was not supported by NullOpHandler}}
  %x = corert_sync.executeop(%cpu) "tf.invalidop"() : 1
  %a = corert_sync.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [1, 1], values = [2.0 : f32]} : 1
  %b = corert_sync.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2, 1], values = [2.0 : f32]} : 1
  // CHECK-NEXT: corert_sync.mlir:[[@LINE+2]]:8: error: runtime error: tfrt_test.matmul: matmul arguments have incompatible shapes
  // expected-error @+1 {{matmul arguments have incompatible shapes}}
  %c = corert_sync.executeop(%cpu) "tfrt_test.matmul"(%a, %b)
      {transpose_a = false, transpose_b = false} : 1
  // Operations on the errors are skipped: nothing is printed.
  corert_sync.print_tensorhandle %c
  corert_sync.print_tensorhandle %x
  tfrt.return
}
// CHECK-NOT: returned
// CHECK-NOT: DenseHostTensor
