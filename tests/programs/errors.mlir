// Errors: a failing kernel or op reports `runtime error: MSG` once, at its
// location; the kernels that use its results do not run and pass the error
// on; kernels that do not depend on it are unaffected.
// RUN: not loom run --plugin %tfrt_test_ops %s 2>&1 | FileCheck %s
// RUN: loom run --plugin %tfrt_test_ops --verify-diagnostics %s

// CHECK-LABEL: --- Running 'kernel_error'
func.func @kernel_error() -> (i32, i32) {
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:8: error: runtime error: something bad happened
  %x = "tfrt_test.fail"() : () -> i32 // expected-error {{runtime error: something bad happened}}
  %one = tfrt.constant.i32 1
  // Skipped: its argument is an error.
  %y = tfrt.add.i32 %x, %one
  // CHECK-NOT: int32
  %ch1 = tfrt.print.i32 %y, %ch0
  // Unaffected.
  %z = tfrt.add.i32 %one, %one
  tfrt.return %y, %z : i32, i32
}
// CHECK-NEXT: 'kernel_error' returned <<error: something bad happened>>,2

// One result may be an error and another not.
// CHECK-LABEL: --- Running 'partial_fail'
func.func @partial_fail() -> !tfrt.chain {
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:12: error: runtime error: something bad happened
  %x, %y = "tfrt_test.partial_fail"() : () -> (i32, i32) // expected-error {{something bad happened}}
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: int32 = 1
  %ch1 = tfrt.print.i32 %x, %ch0
  // The error reaches the chain, and what follows it does not run.
  %ch2 = tfrt.print.i32 %y, %ch1
  // CHECK-NOT: int32
  %ch3 = tfrt.print.i32 %x, %ch2
  tfrt.return %ch3 : !tfrt.chain
}
// CHECK-NEXT: 'partial_fail' returned <<error: something bad happened>>

// An op's metadata function rejects its arguments at once, at the op.
// CHECK-LABEL: --- Running 'metadata_error'
func.func @metadata_error() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [3], values = [1 : i32]} : 1
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:8: error: runtime error: tfrt_test.add: arguments to element-wise op must have identical shapes
  %c = corert.executeop(%cpu) "tfrt_test.add"(%a, %b) : 1 // expected-error {{must have identical shapes}}
  %d = corert.executeop(%cpu) "tfrt_test.relu"(%c) : 1
  %ch1 = corert.print_tensorhandle(%d, %ch0)
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'metadata_error' returned <<error: tfrt_test.add: arguments to element-wise op must have identical shapes>>

// An op whose metadata is fine but whose kernel fails: the error arrives
// with the tensor.
// CHECK-LABEL: --- Running 'dispatch_error'
func.func @dispatch_error() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_from_scalar"() {shape = [1, 1], value = 1 : i32} : 1
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:8: error: runtime error: error from tfrt_test.error.tensor implementation
  %b = corert.executeop(%cpu) "tfrt_test.error.tensor"(%a) : 1 // expected-error {{error from tfrt_test.error.tensor implementation}}
  %c = corert.executeop(%cpu) "tfrt_test.add"(%b, %b) : 1
  // Does not run: its input is an error.
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print"(%c) : 0
  %ch2 = corert.print_tensorhandle(%c, %ch0)
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK-NEXT: 'dispatch_error' returned <<error: error from tfrt_test.error.tensor implementation>>

// Errors travel through calls and their results.
func.func @callee(%one: i32) -> (i32, i32) {
  // CHECK-LABEL: --- Running 'through_calls'
  // CHECK: errors.mlir:[[@LINE+1]]:8: error: runtime error: something bad happened
  %x = "tfrt_test.fail"() : () -> i32 // expected-error {{something bad happened}}
  tfrt.return %one, %x : i32, i32
}
func.func @through_calls() -> (i32, i32) {
  %one = tfrt.constant.i32 1
  %a, %b = tfrt.call @callee(%one) : (i32) -> (i32, i32)
  %c = tfrt.add.i32 %a, %b
  tfrt.return %a, %c : i32, i32
}
// CHECK-NEXT: 'through_calls' returned 1,<<error: something bad happened>>

// An error reported later, from the thread pool.
// CHECK-LABEL: --- Running 'asynchronous_error'
func.func @asynchronous_error() -> i32 {
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:8: error: runtime error: something bad happened asynchronously
  %x = "tfrt_test.report_error_async"() : () -> i32 // expected-error {{something bad happened asynchronously}}
  %y = tfrt.add.i32 %x, %x
  tfrt.return %y : i32
}
// CHECK-NEXT: 'asynchronous_error' returned <<error: something bad happened asynchronously>>

// A kernel given a value of the wrong kind (the generic form does not check
// types against the kernel) fails, naming the argument.
// CHECK-LABEL: --- Running 'wrong_kind'
func.func @wrong_kind() -> i32 {
  %ch = tfrt.new.chain
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:8: error: runtime error: 'tfrt.add.i32': argument 0 is a !tfrt.chain, expected a i32
  %x = "tfrt.add.i32"(%ch, %ch) : (!tfrt.chain, !tfrt.chain) -> i32 // expected-error {{argument 0 is a !tfrt.chain, expected a i32}}
  tfrt.return %x : i32
}
// CHECK-NEXT: 'wrong_kind' returned <<error: 'tfrt.add.i32': argument 0 is a !tfrt.chain, expected a i32>>

// Division by zero.
// CHECK-LABEL: --- Running 'divide_by_zero'
func.func @divide_by_zero() -> i32 {
  %one = tfrt.constant.i32 1
  %zero = tfrt.constant.i32 0
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:12: error: runtime error: Divide by zero
  %q, %r = tfrt.div.i32 %one, %zero // expected-error {{Divide by zero}}
  tfrt.return %q : i32
}
// CHECK-NEXT: 'divide_by_zero' returned <<error: Divide by zero>>

// Sizes from attributes are checked before anything is allocated: a shape
// whose element count overflows names the kernel and the attribute, and a
// float value beyond an integer type's range saturates.
// CHECK-LABEL: --- Running 'huge_shapes'
func.func @huge_shapes() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:8: error: runtime error: 'corert.create_dense_tensor.f32': attribute 'shape': shape [4294967296, 4294967296] has more than 2^28 elements
  %a = corert.create_dense_tensor.f32 {shape = [4294967296, 4294967296], value = [1.0 : f32]} // expected-error {{has more than 2^28 elements}}
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:8: error: runtime error: 'corert.const_string_tensor': attribute 'shape': shape [3037000500, 3037000500] has more than 2^28 elements
  %b = corert.const_string_tensor {shape = [3037000500, 3037000500], value = ["a"]} // expected-error {{has more than 2^28 elements}}
  // CHECK-NEXT: errors.mlir:[[@LINE+1]]:8: error: runtime error: 'ts.build_shape': shape dimension 1 is -7; dimensions must be >= 0 or -1 (unknown)
  %s = ts.build_shape [4294967296 : i64, -7 : i64] // expected-error {{'ts.build_shape': shape dimension 1 is -7}}
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [3], values = [9223372036854775807, -9223372036854775808, 0]
  %c = corert.create_dense_tensor.i64 {shape = [3], value = [1.0e300, -1.0e300, 0.5]}
  %ch1 = corert.print_tensorhandle(%c, %ch0)
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'huge_shapes' returned !tfrt.chain value
