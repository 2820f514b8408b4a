// The limits on calls. A function that calls itself twice per call starts
// calls faster than they finish: the run stops at the number of calls in
// flight (--max-calls-in-flight) with one error, carrying the call stack,
// and the next function runs as usual. --max-call-depth bounds nesting.
// RUN: not timeout 60 loom run --max-calls-in-flight=64 --functions=fib40,after %s 2>&1 | FileCheck %s
// RUN: not timeout 60 loom run --max-call-depth=3 --functions=nested %s 2>&1 | FileCheck %s --check-prefix=DEPTH
// RUN: loom run --functions=fib15 %s | FileCheck %s --check-prefix=DEFAULT

func.func @fib(%n: i32) -> i32 {
  %one = tfrt.constant.i32 1
  %zero = tfrt.constant.i32 0
  %is_small = tfrt.equal.i32 %n, %zero
  %is_one = tfrt.equal.i32 %n, %one
  %r = tfrt.cond %is_small @identity @fib_positive (%n) : (i32) -> (i32)
  tfrt.return %r : i32
}
func.func @fib_positive(%n: i32) -> i32 {
  %one = tfrt.constant.i32 1
  %is_one = tfrt.equal.i32 %n, %one
  %r = tfrt.cond %is_one @identity @fib_sum (%n) : (i32) -> (i32)
  tfrt.return %r : i32
}
func.func @identity(%n: i32) -> i32 {
  tfrt.return %n : i32
}
func.func @fib_sum(%n: i32) -> i32 {
  %minus_one = tfrt.constant.i32 -1
  %minus_two = tfrt.constant.i32 -2
  %a = tfrt.add.i32 %n, %minus_one
  %b = tfrt.add.i32 %n, %minus_two
  %fa = tfrt.call @fib(%a) : (i32) -> i32
  %fb = tfrt.call @fib(%b) : (i32) -> i32
  %r = tfrt.add.i32 %fa, %fb
  tfrt.return %r : i32
}

// fib(40) makes 300 million calls; it stops when 64 are in flight.
// CHECK-LABEL: --- Running 'fib40':
// CHECK-NEXT: limits.mlir:[[#]]:8: error: runtime error: calling @{{fib|fib_positive|fib_sum}}: 64 function calls are in flight, the most allowed (max_calls_in_flight)
// CHECK-NEXT: {{^}}  at @{{fib|fib_positive|fib_sum}} ({{.*}}limits.mlir:[[#]]:[[#]])
// CHECK: {{^}}  at @fib40 ({{.*}}limits.mlir:[[#@LINE+5]]:8)
// CHECK-NEXT: 'fib40' returned <<error: calling @{{fib|fib_positive|fib_sum}}: 64 function calls are in flight, the most allowed (max_calls_in_flight)>>
// CHECK-NOT: error
func.func @fib40() -> i32 {
  %n = tfrt.constant.i32 40
  %r = tfrt.call @fib(%n) : (i32) -> i32
  tfrt.return %r : i32
}

// The stop ends with the function that hit the limit.
// CHECK-LABEL: --- Running 'after':
// CHECK-NEXT: 'after' returned 42
func.func @after() -> i32 {
  %x = tfrt.constant.i32 42
  tfrt.return %x : i32
}

// DEFAULT: 'fib15' returned 610
func.func @fib15() -> i32 {
  %n = tfrt.constant.i32 15
  %r = tfrt.call @fib(%n) : (i32) -> i32
  tfrt.return %r : i32
}

func.func @level3(%x: i32) -> i32 {
  tfrt.return %x : i32
}
func.func @level2(%x: i32) -> i32 {
  %y = tfrt.call @level3(%x) : (i32) -> i32
  tfrt.return %y : i32
}
func.func @level1(%x: i32) -> i32 {
  %y = tfrt.call @level2(%x) : (i32) -> i32
  tfrt.return %y : i32
}
func.func @level0(%x: i32) -> i32 {
  %y = tfrt.call @level1(%x) : (i32) -> i32
  tfrt.return %y : i32
}

// DEPTH-LABEL: --- Running 'nested':
// DEPTH-NEXT: limits.mlir:[[#@LINE-13]]:8: error: runtime error: calling @level3: the call depth limit (3) is exceeded (max_call_depth)
// DEPTH-NEXT: {{^}}  at @level2 ({{.*}}limits.mlir:[[#@LINE-14]]:8)
// DEPTH-NEXT: {{^}}  at @level1 ({{.*}}limits.mlir:[[#@LINE-11]]:8)
// DEPTH-NEXT: {{^}}  at @level0 ({{.*}}limits.mlir:[[#@LINE-8]]:8)
// DEPTH-NEXT: {{^}}  at @nested ({{.*}}limits.mlir:[[#@LINE+5]]:8)
// DEPTH-NEXT: 'nested' returned <<error: calling @level3: the call depth limit (3) is exceeded (max_call_depth)>>
// DEPTH-NOT: error
func.func @nested() -> i32 {
  %x = tfrt.constant.i32 1
  %y = tfrt.call @level0(%x) : (i32) -> i32
  tfrt.return %y : i32
}
