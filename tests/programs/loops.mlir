// TFRT's loops: tfrt.while (a body function returning the next loop values
// and whether to run again) and tfrt.repeat.i32 (a region run N times,
// using the loop values by their names).
// RUN: not loom run %s 2>&1 | FileCheck %s

func.func @false_i1() -> i1 {
  %f = tfrt.constant.i1 false
  tfrt.return %f : i1
}

func.func @true_i1() -> i1 {
  %t = tfrt.constant.i1 true
  tfrt.return %t : i1
}

// (iteration + 1, arg + 5, iteration + 1 != 6), printing arg + 5.
func.func @while_body(%ch: !tfrt.chain, %iteration: i32, %arg: i32) -> (!tfrt.chain, i32, i32, i1) {
  %one = tfrt.constant.i32 1
  %five = tfrt.constant.i32 5
  %six = tfrt.constant.i32 6
  %next_iteration = tfrt.add.i32 %iteration, %one
  %next_arg = tfrt.add.i32 %arg, %five
  %done = tfrt.equal.i32 %next_iteration, %six
  %again = tfrt.cond %done @false_i1 @true_i1 () : () -> (i1)
  %ch1 = tfrt.print.i32 %next_arg, %ch
  tfrt.return %ch1, %next_iteration, %next_arg, %again : !tfrt.chain, i32, i32, i1
}

// CHECK-LABEL: --- Running 'tfrt_while'
func.func @tfrt_while() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cond = tfrt.constant.i1 true
  %iteration = tfrt.constant.i32 0
  %arg = tfrt.constant.i32 0
  // CHECK-NEXT: int32 = 5
  // CHECK-NEXT: int32 = 10
  // CHECK-NEXT: int32 = 15
  // CHECK-NEXT: int32 = 20
  // CHECK-NEXT: int32 = 25
  // CHECK-NEXT: int32 = 30
  %ch1, %final_iteration, %final_arg = tfrt.while %cond @while_body(%ch0, %iteration, %arg) parallel_iterations(1) : (!tfrt.chain, i32, i32) -> (!tfrt.chain, i32, i32)
  // CHECK-NEXT: int32 = 30
  %ch2 = tfrt.print.i32 %final_arg, %ch1
  // CHECK-NEXT: int32 = 6
  %ch3 = tfrt.print.i32 %final_iteration, %ch2
  tfrt.return %ch3 : !tfrt.chain
}
// CHECK-NEXT: 'tfrt_while' returned !tfrt.chain value

// A false condition runs no iteration: the operands are the results.
// CHECK-LABEL: --- Running 'tfrt_while_false'
func.func @tfrt_while_false() -> (i32, i32) {
  %ch0 = tfrt.new.chain
  %cond = tfrt.constant.i1 false
  %iteration = tfrt.constant.i32 7
  %arg = tfrt.constant.i32 8
  %ch1, %i, %a = tfrt.while %cond @while_body(%ch0, %iteration, %arg) parallel_iterations(4) : (!tfrt.chain, i32, i32) -> (!tfrt.chain, i32, i32)
  tfrt.return %i, %a : i32, i32
}
// CHECK-NEXT: 'tfrt_while_false' returned 7,8

// A failing body fails the loop's results.
func.func @failing_body(%x: i32) -> (i32, i1) {
  %zero = tfrt.constant.i32 0
  %q, %r = tfrt.div.i32 %x, %zero
  %again = tfrt.equal.i32 %q, %q
  tfrt.return %q, %again : i32, i1
}

// CHECK-LABEL: --- Running 'tfrt_while_error'
func.func @tfrt_while_error() -> i32 {
  %cond = tfrt.constant.i1 true
  %x = tfrt.constant.i32 1
  %y = tfrt.while %cond @failing_body(%x) parallel_iterations(1) : (i32) -> (i32)
  tfrt.return %y : i32
}
// CHECK-NEXT: loops.mlir:[[#@LINE-12]]:12: error: runtime error: Divide by zero
// CHECK-NEXT: 'tfrt_while_error' returned <<error: Divide by zero>>

// CHECK-LABEL: --- Running 'repeat'
func.func @repeat() -> i32 {
  %count = tfrt.constant.i32 4
  %ch0 = tfrt.new.chain
  %v0 = tfrt.constant.i32 1
  // CHECK-NEXT: int32 = 1
  // CHECK-NEXT: int32 = 2
  // CHECK-NEXT: int32 = 4
  // CHECK-NEXT: int32 = 8
  %ch3:2 = tfrt.repeat.i32 %count, %ch0, %v0 : !tfrt.chain, i32 {
    %ch2 = tfrt.print.i32 %v0, %ch0
    %v2 = tfrt.add.i32 %v0, %v0
    tfrt.return %ch2, %v2 : !tfrt.chain, i32
  }
  // CHECK-NEXT: int32 = 16
  %ch4 = tfrt.print.i32 %ch3#1, %ch3#0
  tfrt.return %ch3#1 : i32
}
// CHECK-NEXT: 'repeat' returned 16

// A value of the enclosing function that is no loop value stays as it is;
// a trip count of zero gives the operands back.
// CHECK-LABEL: --- Running 'repeat_captures'
func.func @repeat_captures() -> (i32, i32) {
  %count = tfrt.constant.i32 1000
  %v0 = tfrt.constant.i32 42
  %one = tfrt.constant.i32 1
  %sum = tfrt.repeat.i32 %count, %v0 : i32 {
    %v2 = tfrt.add.i32 %v0, %one
    tfrt.return %v2 : i32
  }
  %zero = tfrt.constant.i32 0
  %same = tfrt.repeat.i32 %zero, %v0 : i32 {
    %v2 = tfrt.add.i32 %v0, %one
    tfrt.return %v2 : i32
  }
  tfrt.return %sum, %same : i32, i32
}
// CHECK-NEXT: 'repeat_captures' returned 1042,42
