// Strings (!tfrt.string) and TFRT's test kernels on them:
// tfrt_test.get_string, print_string, append_string and string_equal.
// RUN: not loom run --plugin %tfrt_test_ops %s 2>&1 | FileCheck %s
// RUN: loom run --plugin %tfrt_test_ops --verify-diagnostics %s

// CHECK-LABEL: --- Running 'hello'
func.func @hello() {
  %ch0 = tfrt.new.chain
  %hello = "tfrt_test.get_string"() {value = "hello world"} : () -> !tfrt.string
  // CHECK-NEXT: string = hello world
  "tfrt_test.print_string"(%hello, %ch0) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  tfrt.return
}

// CHECK-LABEL: --- Running 'append'
func.func @append() -> (i1, i1) {
  %ch0 = tfrt.new.chain
  %x = "tfrt_test.get_string"() {value = "bark"} : () -> !tfrt.string
  %y = "tfrt_test.get_string"() {value = "rarf"} : () -> !tfrt.string
  // CHECK-NEXT: string = bark
  %ch1 = "tfrt_test.print_string"(%x, %ch0) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  %z = "tfrt_test.append_string"(%x, %y) : (!tfrt.string, !tfrt.string) -> !tfrt.string
  // CHECK-NEXT: string = barkrarf
  %ch2 = "tfrt_test.print_string"(%z, %ch1) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  // Escapes, and the empty string.
  %e = "tfrt_test.get_string"() {value = ""} : () -> !tfrt.string
  %q = "tfrt_test.get_string"() {value = "tab\09\22quoted\22"} : () -> !tfrt.string
  %eq = "tfrt_test.append_string"(%e, %q) : (!tfrt.string, !tfrt.string) -> !tfrt.string
  // CHECK-NEXT: string = tab{{.}}"quoted"
  %ch3 = "tfrt_test.print_string"(%eq, %ch2) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  %same = "tfrt_test.string_equal"(%eq, %q) : (!tfrt.string, !tfrt.string) -> i1
  %other = "tfrt_test.string_equal"(%x, %y) : (!tfrt.string, !tfrt.string) -> i1
  tfrt.return %same, %other : i1, i1
}
// CHECK-NEXT: 'append' returned 1,0

// CHECK-LABEL: --- Running 'errors'
func.func @errors() -> (!tfrt.chain, !tfrt.string) {
  %ch0 = tfrt.new.chain
  %n = tfrt.constant.i32 7
  // CHECK-NEXT: strings.mlir:[[@LINE+2]]:10: error: runtime error: 'tfrt_test.print_string': argument 0 is a i32, expected a !tfrt.string
  // expected-error @+1 {{'tfrt_test.print_string': argument 0 is a i32, expected a !tfrt.string}}
  %ch1 = "tfrt_test.print_string"(%n, %ch0) : (i32, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: strings.mlir:[[@LINE+2]]:8: error: runtime error: tfrt_test.get_string needs a string attribute 'value'
  // expected-error @+1 {{tfrt_test.get_string needs a string attribute 'value'}}
  %s = "tfrt_test.get_string"() {value = 3} : () -> !tfrt.string
  tfrt.return %ch1, %s : !tfrt.chain, !tfrt.string
}
// CHECK-NEXT: 'errors' returned <<error: 'tfrt_test.print_string': argument 0 is a i32, expected a !tfrt.string>>,<<error: tfrt_test.get_string needs a string attribute 'value'>>
