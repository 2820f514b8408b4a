// Control flow by calling functions: tfrt.call, tfrt.case, tfrt.cond, and
// corert.cond / corert.while on tensor conditions. Callees run in frames of
// their own; their results flow back as they are produced.
// RUN: not loom run --plugin %tfrt_test_ops %s 2>&1 | FileCheck %s

func.func @add_one(%x: i32) -> i32 {
  %one = tfrt.constant.i32 1
  %y = tfrt.add.i32 %x, %one
  tfrt.return %y : i32
}

func.func @twice(%x: i32, %ch: !tfrt.chain) -> (i32, !tfrt.chain) {
  %a = tfrt.call @add_one(%x) : (i32) -> i32
  %b = tfrt.call @add_one(%a) : (i32) -> i32
  %ch1 = tfrt.print.i32 %b, %ch
  tfrt.return %b, %ch1 : i32, !tfrt.chain
}

// CHECK-LABEL: --- Running 'call'
func.func @call() -> i32 {
  %ch0 = tfrt.new.chain
  %x = tfrt.constant.i32 40
  // CHECK-NEXT: int32 = 42
  %y, %ch1 = tfrt.call @twice(%x, %ch0) : (i32, !tfrt.chain) -> (i32, !tfrt.chain)
  tfrt.return %y : i32
}
// CHECK-NEXT: 'call' returned 42

// Recursion: fib(n) by tfrt.case on n < 2.
func.func @fib(%n: i32) -> i32 {
  %zero = tfrt.constant.i32 0
  %one = tfrt.constant.i32 1
  %is0 = tfrt.equal.i32 %n, %zero
  %is1 = tfrt.equal.i32 %n, %one
  %r = tfrt.cond %is0 @return_arg @fib_not_zero (%n) : (i32) -> (i32)
  tfrt.return %r : i32
}
func.func @return_arg(%n: i32) -> i32 {
  tfrt.return %n : i32
}
func.func @fib_not_zero(%n: i32) -> i32 {
  %one = tfrt.constant.i32 1
  %is1 = tfrt.equal.i32 %n, %one
  %r = tfrt.cond %is1 @return_arg @fib_recurse (%n) : (i32) -> (i32)
  tfrt.return %r : i32
}
func.func @fib_recurse(%n: i32) -> i32 {
  %minus_one = tfrt.constant.i32 -1
  %minus_two = tfrt.constant.i32 -2
  %a = tfrt.add.i32 %n, %minus_one
  %b = tfrt.add.i32 %n, %minus_two
  %fa = tfrt.call @fib(%a) : (i32) -> i32
  %fb = tfrt.call @fib(%b) : (i32) -> i32
  %r = tfrt.add.i32 %fa, %fb
  tfrt.return %r : i32
}

// CHECK-LABEL: --- Running 'recursion'
func.func @recursion() -> i32 {
  %n = tfrt.constant.i32 15
  %r = tfrt.call @fib(%n) : (i32) -> i32
  tfrt.return %r : i32
}
// CHECK-NEXT: 'recursion' returned 610

func.func @branch0(%x: i32) -> i32 {
  tfrt.return %x : i32
}
func.func @branch1(%x: i32) -> i32 {
  %y = tfrt.add.i32 %x, %x
  tfrt.return %y : i32
}

// tfrt.case calls the branch its index names; a bad index is an error.
// CHECK-LABEL: --- Running 'case'
func.func @case() -> (i32, i32, i32) {
  %zero = tfrt.constant.i32 0
  %one = tfrt.constant.i32 1
  %five = tfrt.constant.i32 5
  %x = tfrt.constant.i32 21
  %a = tfrt.case %zero [@branch0, @branch1] (%x) : (i32) -> (i32)
  %b = tfrt.case %one [@branch0, @branch1] (%x) : (i32) -> (i32)
  // CHECK-NEXT: control_flow.mlir:[[@LINE+1]]:8: error: runtime error: branch_index invalid. branch index: 5 # branches: 2
  %c = tfrt.case %five [@branch0, @branch1] (%x) : (i32) -> (i32)
  tfrt.return %a, %b, %c : i32, i32, i32
}
// CHECK-NEXT: 'case' returned 21,42,<<error: branch_index invalid. branch index: 5 # branches: 2>>

func.func @then(%ch: !tfrt.chain, %x: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  %ch1 = corert.print_tensorhandle(%x, %ch)
  tfrt.return %ch1, %x : !tfrt.chain, !corert.tensorhandle
}
func.func @else(%ch: !tfrt.chain, %x: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %y = corert.executeop(%cpu) "tfrt_test.add"(%x, %x) : 1
  tfrt.return %ch, %y : !tfrt.chain, !corert.tensorhandle
}

// corert.cond: a one-element tensor is true when it is non-zero (or a
// non-empty string).
// CHECK-LABEL: --- Running 'corert_cond'
func.func @corert_cond() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %x = corert.const_dense_tensor dense<[1, 2]> : tensor<2xi32>
  %yes = corert.const_dense_tensor dense<1> : tensor<i32>
  %no = corert.const_dense_tensor dense<0.0> : tensor<1xf32>
  %empty = corert.const_string_tensor {shape = [1], value = [""]}
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [1, 2]
  %ch1, %a = corert.cond %yes @then @else (%ch0, %x) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  %ch2, %b = corert.cond %no @then @else (%ch1, %x) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [2, 4]
  %ch3 = corert.print_tensorhandle(%b, %ch2)
  %ch4, %c = corert.cond %empty @then @else (%ch3, %b) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [4, 8]
  %ch5 = corert.print_tensorhandle(%c, %ch4)
  // A condition must have one element.
  // CHECK-NEXT: control_flow.mlir:[[@LINE+1]]:14: error: runtime error: 'corert.cond': the condition must have one element, got shape [2]
  %ch6, %d = corert.cond %x @then @else (%ch5, %x) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  tfrt.return %ch5 : !tfrt.chain
}
// CHECK-NEXT: 'corert_cond' returned !tfrt.chain value

// corert.while: while cond(values) is true, values = body(values); here a
// counter runs down from 3 (non-zero is true) and a tensor doubles.
func.func @while_cond(%ch: !tfrt.chain, %i: !corert.tensorhandle, %x: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  tfrt.return %ch, %i : !tfrt.chain, !corert.tensorhandle
}
func.func @while_body(%ch: !tfrt.chain, %i: !corert.tensorhandle, %x: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle, !corert.tensorhandle) {
  %cpu = corert.get_op_handler %ch "cpu"
  %minus_one = corert.const_dense_tensor dense<-1> : tensor<i32>
  %next = corert.executeop(%cpu) "tf.AddV2"(%i, %minus_one) : 1
  %doubled = corert.executeop(%cpu) "tfrt_test.add"(%x, %x) : 1
  %ch1 = corert.print_tensorhandle(%doubled, %ch)
  tfrt.return %ch1, %next, %doubled : !tfrt.chain, !corert.tensorhandle, !corert.tensorhandle
}

// CHECK-LABEL: --- Running 'corert_while'
func.func @corert_while() -> (!tfrt.chain, i32) {
  %ch0 = tfrt.new.chain
  %three = corert.const_dense_tensor dense<3> : tensor<i32>
  %x = corert.const_dense_tensor dense<[1.0, 0.5]> : tensor<2xf32>
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [2.000000e+00, 1.000000e+00]
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [4.000000e+00, 2.000000e+00]
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [8.000000e+00, 4.000000e+00]
  %ch1, %i, %y = corert.while @while_cond @while_body (%ch0, %three, %x) : (!corert.tensorhandle, !corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
  %n = corert.tensorhandle_to_int32 %i
  tfrt.return %ch1, %n : !tfrt.chain, i32
}
// CHECK-NEXT: 'corert_while' returned !tfrt.chain value,0

// A loop whose condition is false at once returns its initial values.
// CHECK-LABEL: --- Running 'while_not_taken'
func.func @while_not_taken() -> i32 {
  %ch0 = tfrt.new.chain
  %zero = corert.const_dense_tensor dense<0> : tensor<i32>
  %x = corert.const_dense_tensor dense<[1.0, 0.5]> : tensor<2xf32>
  %ch1, %i, %y = corert.while @while_cond @while_body (%ch0, %zero, %x) : (!corert.tensorhandle, !corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
  %n = corert.tensorhandle_to_int32 %i
  tfrt.return %n : i32
}
// CHECK-NEXT: 'while_not_taken' returned 0

// Endless recursion ends at the call depth limit, as an error.
func.func @forever(%x: i32) -> i32 {
  %y = tfrt.call @forever(%x) : (i32) -> i32
  tfrt.return %y : i32
}

// CHECK-LABEL: --- Running 'too_deep'
func.func @too_deep() -> i32 {
  %x = tfrt.constant.i32 1
  %y = tfrt.call @forever(%x) : (i32) -> i32
  tfrt.return %y : i32
}
// Reported once, with the call stack (its middle elided).
// CHECK-NEXT: control_flow.mlir:[[#@LINE-11]]:8: error: runtime error: calling @forever: the call depth limit (10000) is exceeded (max_call_depth)
// CHECK-COUNT-8: {{^}}  at @forever ({{.*}}control_flow.mlir:[[#@LINE-12]]:8)
// CHECK-NEXT: {{^}}  ... 9989 more
// CHECK-NEXT: {{^}}  at @forever ({{.*}}control_flow.mlir:[[#@LINE-14]]:8)
// CHECK-NEXT: {{^}}  at @forever ({{.*}}control_flow.mlir:[[#@LINE-15]]:8)
// CHECK-NEXT: {{^}}  at @forever ({{.*}}control_flow.mlir:[[#@LINE-16]]:8)
// CHECK-NEXT: {{^}}  at @too_deep ({{.*}}control_flow.mlir:[[#@LINE-10]]:8)
// CHECK-NEXT: 'too_deep' returned <<error: calling @forever: the call depth limit (10000) is exceeded (max_call_depth)>>
