// Syntax errors: `file:line:col: error: what`, quoting the offending token,
// and a non-zero exit. Each part below (between `// -----` lines) is parsed
// as a program of its own.
// RUN: loom check --split-input-file --verify-diagnostics %s
// RUN: not loom check --split-input-file %s 2>&1 | FileCheck %s

// CHECK: parse_errors.mlir:[[@LINE+2]]:1: error: expected 'func.func', got 'bogus'
// expected-error @+1 {{expected 'func.func', got 'bogus'}}
bogus

// -----

// expected-error @+1 {{expected the function's name (@name), got '('}}
func.func () {
  tfrt.return
}

// -----

func.func @f() {
  tfrt.return
}
// expected-error @+1 {{redefinition of symbol named 'f'}}
func.func @f() {
  tfrt.return
}

// -----

// expected-error @+1 {{expected ':' after the argument's name, got ')'}}
func.func @f(%x) {
  tfrt.return
}

// -----

// CHECK: parse_errors.mlir:[[@LINE+2]]:19: error: expected a type, got 'int'
// expected-error @+1 {{expected a type, got 'int'}}
func.func @f() -> int {
  tfrt.return
}

// -----

// expected-error @+2 {{expected '{' to begin the body of function 'f', got 'func.func'}}
func.func @f()
func.func @g() {
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
// expected-error @+1 {{function 'f' must end with 'tfrt.return', got '}'}}
}

// -----

func.func @f() {
  tfrt.return
  // expected-error @+1 {{'tfrt.return' must be the last operation of function 'f', got 'tfrt.new.chain'}}
  tfrt.new.chain
}

// -----

func.func @f() -> i32 {
  // CHECK: parse_errors.mlir:[[@LINE+2]]:15: error: use of undeclared SSA value '%y'
  // expected-error @+1 {{use of undeclared SSA value '%y'}}
  tfrt.return %y : i32
}

// -----

func.func @f() {
  %x = tfrt.constant.i32 1
  // expected-error @+1 {{redefinition of SSA value '%x'}}
  %x = tfrt.constant.i32 2
  tfrt.return
}

// -----

func.func @f() -> i32 {
  %a = tfrt.constant.i32 7
  %b = tfrt.constant.i32 2
  %q:2 = tfrt.div.i32 %a, %b
  // expected-error @+1 {{result number 2 is out of range for '%q', which has 2}}
  tfrt.return %q#2 : i32
}

// -----

func.func @f() {
  // expected-error @+1 {{'tfrt.constant.i32' has 1 result, but 2 names are given}}
  %a, %b = tfrt.constant.i32 1
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{result group size must be in [1, 4096]}}
  %a:0 = tfrt.new.chain
  tfrt.return
}

// -----

func.func @f() {
  // CHECK: parse_errors.mlir:[[@LINE+2]]:8: error: custom op 'tfrt.frobnicate' is unknown; write it in the generic form "tfrt.frobnicate"(...) : (...) -> (...)
  // expected-error @+1 {{custom op 'tfrt.frobnicate' is unknown}}
  %x = tfrt.frobnicate
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  // expected-error @+2 {{expected ':' before the operation's type, got 'tfrt.return'}}
  "tfrt_test.print_chain"(%ch)
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  // expected-error @+1 {{use of value expects different type than prior uses: 'i32' vs '!tfrt.chain'}}
  %x = "tfrt.add.i32"(%ch, %ch) : (i32, i32) -> i32
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  // expected-error @+1 {{'tfrt.add.i32' has 2 operands, but its type lists 1}}
  %x = "tfrt.add.i32"(%ch, %ch) : (!tfrt.chain) -> i32
  tfrt.return
}

// -----

func.func @f() -> i32 {
  %ch = tfrt.new.chain
  // expected-error @+1 {{type of return operand 0 ('!tfrt.chain') doesn't match function result type ('i32') in function @f}}
  tfrt.return %ch : !tfrt.chain
}

// -----

func.func @f() -> (i32, i32) {
  %x = tfrt.constant.i32 1
  // expected-error @+1 {{'tfrt.return' has 1 operand, but function 'f' returns 2 values}}
  tfrt.return %x : i32
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  // expected-error @+1 {{'tfrt.print.i32' expects operand #0 of type 'i32', got a value of type '!tfrt.chain'}}
  %ch1 = tfrt.print.i32 %ch, %ch
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{'tfrt.call' refers to an undefined function @nowhere}}
  tfrt.call @nowhere() : () -> ()
  tfrt.return
}

// -----

func.func @g(%x: i32) -> i32 {
  tfrt.return %x : i32
}
func.func @f() {
  // expected-error @+1 {{'tfrt.call' passes 0 arguments and expects 1 result, but @g takes 1 and returns 1}}
  %y = tfrt.call @g() : () -> i32
  tfrt.return
}

// -----

func.func @g(%x: i32) -> i32 {
  tfrt.return %x : i32
}
func.func @f() {
  %x = tfrt.constant.i64 1
  // expected-error @+1 {{'tfrt.call' passes a 'i64' as argument 0 of @g, which takes a 'i32'}}
  %y = tfrt.call @g(%x) : (i64) -> i32
  tfrt.return
}

// -----

func.func @f() {
  // CHECK: parse_errors.mlir:[[@LINE+2]]:35: error: expected an attribute value, got '"unterminated'
  // expected-error @+1 {{expected an attribute value, got '"unterminated'}}
  %x = "tfrt.constant.i32"() {x = "unterminated
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{expected an operation, got '`'}}
  `
}

// -----

func.func @f() {
  // expected-error @+1 {{integer literal is out of range, got '99999999999999999999'}}
  %x = tfrt.constant.i64 99999999999999999999
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{integer constant 1000 is out of range for type 'i8'}}
  %x = "tfrt.constant.i32"() {value = 1000 : i8} : () -> i32
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{'tfrt.constant.i32' needs a value of type 'i32', got 'i64'}}
  %x = tfrt.constant.i32 1 : i64
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{floating point value not valid for integer type 'i32'}}
  %x = tfrt.constant.i32 1.5
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{dense attribute has 3 elements, but its type 'tensor<2xi32>' needs 2}}
  %t = corert.const_dense_tensor dense<[1, 2, 3]> : tensor<2xi32>
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{a dense attribute needs a tensor type, got 'i32'}}
  %t = corert.const_dense_tensor dense<1> : i32
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{floating point value not valid for a tensor of i32}}
  %t = corert.const_dense_tensor dense<[1, 2.5]> : tensor<2xi32>
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{a dense attribute needs a static shape, got 'tensor<?xf32>'}}
  %t = corert.const_dense_tensor dense<1.0> : tensor<?xf32>
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{'tensor<4194305xi8>' has more than 4194304 elements}}
  %t = corert.const_dense_tensor dense<1> : tensor<4194305xi8>
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{rank exceeds 8, the most Loom supports}}
  %t = corert.const_dense_tensor dense<1> : tensor<1x1x1x1x1x1x1x1x1xi8>
  tfrt.return
}

// -----

func.func @f() {
  %c = tfrt.constant.i1 true
  // expected-error @+1 {{expected '{' to begin a region, got '%c'}}
  "tfrt.if"(%c) (%c) : (i1) -> ()
  tfrt.return
}

// -----

func.func @f() {
  %c = tfrt.constant.i1 true
  "tfrt.if"(%c) ({
    %x = tfrt.constant.i32 1
  // expected-error @+1 {{the region of 'tfrt.if' must end with 'tfrt.return', got '}'}}
  }) : (i1) -> ()
  tfrt.return
}

// -----

func.func @f() {
  %c = tfrt.constant.i1 true
  "tfrt.if"(%c) ({
    // expected-error @+1 {{use of undeclared SSA value '%nowhere'}}
    tfrt.return %nowhere : i32
  }) : (i1) -> ()
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  tfrt_test.benchmark "inner"(%ch : !tfrt.chain) max_count = 1, duration_secs = 1 {
    %inner = tfrt.constant.i32 1
    tfrt.return %inner : i32
  }
  // A region's values stay in it.
  // expected-error @+1 {{use of undeclared SSA value '%inner'}}
  %ch1 = tfrt.print.i32 %inner, %ch
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  %one = tfrt.constant.i32 1
  tfrt_test.benchmark "two"(%ch : !tfrt.chain) max_count = 1, duration_secs = 1 {
    // expected-error @+1 {{'tfrt_test.benchmark' returns 2 values from its region: one is expected}}
    tfrt.return %one, %one : i32, i32
  }
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  // expected-error @+1 {{'tfrt_test.benchmark' expects operand #0 of type 'i32', got a value of type '!tfrt.chain'}}
  tfrt_test.benchmark "typed"(%ch : i32) max_count = 1 {
    tfrt.return %ch : !tfrt.chain
  }
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  // expected-error @+1 {{expected an integer value of 'max_count', got '"x"'}}
  tfrt_test.benchmark "typed"(%ch : !tfrt.chain) max_count = "x" {
    tfrt.return %ch : !tfrt.chain
  }
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  // expected-error @+2 {{expected '{' to begin the benchmark, got 'tfrt.return'}}
  tfrt_test.benchmark "typed"(%ch : !tfrt.chain) max_count = 1
  tfrt.return
}

// -----

func.func @f() {
// expected-error @+1 {{blocks are not supported: a function has one block, got '^bb0'}}
^bb0:
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  %cpu = corert.get_op_handler %ch "cpu"
  // expected-error @+1 {{expected the number of results, got 'one'}}
  %x = corert.executeop(%cpu) "tf.Const"() : one
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  %cpu = corert.get_op_handler %ch "cpu"
  // expected-error @+1 {{'corert.executeop' expects operand #1 of type '!corert.tensorhandle', got a value of type '!tfrt.chain'}}
  %x = corert.executeop(%cpu) "tf.Identity"(%ch) : 1
  tfrt.return
}

// -----

func.func @f() {
  %ch = tfrt.new.chain
  // expected-error @+1 {{'corert.executeop' expects operand #0 of type '!corert.ophandler', got a value of type '!tfrt.chain'}}
  %x = corert.executeop(%ch) "tf.Const"() : 1
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{duplicate key 'value' in the attribute dictionary}}
  %x = "tfrt.constant.i32"() {value = 1 : i32, value = 2 : i32} : () -> i32
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{type '!tfrt.chain' is not a tensor element type and cannot be an op attribute}}
  %x = "tfrt.constant.i32"() {value = !tfrt.chain} : () -> i32
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{unknown attribute: only #<dialect>.shape<...> attributes are supported, got '#foo.bar'}}
  %x = "tfrt.constant.i32"() {value = #foo.bar<1>} : () -> i32
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{dictionary attributes are not supported as values, got '{'}}
  %x = "tfrt.constant.i32"() {value = {a = 1}} : () -> i32
  tfrt.return
}

// -----

// expected-error @+1 {{unbalanced '<' in dialect type}}
func.func @f(%x: !foo.bar<1, 2) {
  tfrt.return
}

// -----

func.func @f() {
  %i = tfrt.constant.i32 0
  // expected-error @+1 {{'tfrt.case' needs a list of one or more functions [@f, ...]}}
  tfrt.case %i [] () : () -> ()
  tfrt.return
}

// -----

func.func @f() {
  // expected-error @+1 {{expected '(' after 'loc', got '"here"'}}
  %ch = tfrt.new.chain loc "here"
  tfrt.return
}

// -----

func.func @f() {
  %x = tfrt.new.chain
  // expected-error @+1 {{expected a result number after '#'}}
  %ch = tfrt.merge.chains %x#
  tfrt.return
}

// -----

func.func @f() -> i32 {
  %one = tfrt.constant.i32 1
  %r = tfrt_test.do.async %one : (i32) -> (i32) {
    // expected-error @+1 {{'tfrt_test.do.async' returns 2 values from its region, which do not match the 1 results of its type}}
    tfrt.return %one, %one : i32, i32
  }
  tfrt.return %r : i32
}

// -----

module {
  func.func @f() {
    tfrt.return
  }
// expected-error @+1 {{expected 'func.func' or '}', got end of file}}
