// The parse errors of tfrt.while and tfrt.repeat.i32; each part below
// (between `// -----` lines) is a program of its own.
// RUN: loom check --split-input-file --verify-diagnostics %s

func.func @body(%x: i32) -> i32 {
  tfrt.return %x : i32
}

func.func @no_i1() -> i32 {
  %cond = tfrt.constant.i1 true
  %x = tfrt.constant.i32 1
  // expected-error @+1 {{'tfrt.while' needs @body to take its 1 loop values and return their next values and an i1}}
  %y = tfrt.while %cond @body(%x) parallel_iterations(1) : (i32) -> (i32)
  tfrt.return %y : i32
}

// -----

func.func @body(%x: i32) -> (i32, i1) {
  %t = tfrt.constant.i1 true
  tfrt.return %x, %t : i32, i1
}

func.func @bad_parallel() -> i32 {
  %cond = tfrt.constant.i1 true
  %x = tfrt.constant.i32 1
  // expected-error @+1 {{'parallel_iterations' of 'tfrt.while' must be a positive integer}}
  %y = tfrt.while %cond @body(%x) parallel_iterations(0) : (i32) -> (i32)
  tfrt.return %y : i32
}

// -----

func.func @repeat_mismatch() -> i32 {
  %count = tfrt.constant.i32 2
  %x = tfrt.constant.i32 1
  %y = tfrt.repeat.i32 %count, %x : i32 {
    %f = tfrt.constant.f32 1.0
    // expected-error @+1 {{'tfrt.repeat.i32' returns 1 values from its body, which do not match its 1 loop values}}
    tfrt.return %f : f32
  }
  tfrt.return %y : i32
}

// -----

func.func @repeat_without_count() {
  // expected-error @+1 {{'tfrt.repeat.i32' needs an i32 count as its first operand}}
  tfrt.repeat.i32 {
    tfrt.return
  }
  tfrt.return
}
