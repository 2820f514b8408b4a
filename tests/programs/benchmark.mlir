// tfrt_test.benchmark runs its region over and over and prints TFRT's
// benchmark report. A region is a body of its own: it uses values of the
// enclosing function (captured), ends with tfrt.return, and may hold
// regions of its own.
// RUN: loom run --plugin %tfrt_test_ops --test_init_function=register_op_handlers_cpu -functions=BM_matmul,generic_form %s | FileCheck %s
// RUN: loom run --plugin %tfrt_test_ops -functions=count_runs,nested,do_async %s | FileCheck %s --check-prefix=RUNS
// RUN: not loom run --plugin %tfrt_test_ops -functions=failing_body,zero_count,no_name %s 2>%t.err | FileCheck %s --check-prefix=RESULTS
// RUN: FileCheck %s --check-prefix=ERRORS < %t.err

func.func @register_op_handlers_cpu() {
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  corert.register_op_handler %cpu "cpu"
  tfrt.return
}

// CHECK-LABEL: --- Running 'BM_matmul'
// CHECK-NEXT: BM:BM_matmul:Duration(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:Count: 200{{$}}
// CHECK-NEXT: BM:BM_matmul:Time Min(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:Time 50%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:Time 95%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:Time 99%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:CPU Min(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:CPU 50%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:CPU 95%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:CPU 99%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:BM_matmul:CPU utilization(percent): {{[0-9.]+e[+-][0-9]+$}}
// CHECK-NOT: BM:
func.func @BM_matmul() {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu)
    "tfrt_test.create_dense_tensor"() { shape = [2, 2], values = [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32] } : 1
  tfrt_test.benchmark "BM_matmul"(%cpu : !corert.ophandler, %a : !corert.tensorhandle, %ch0 : !tfrt.chain) duration_secs = 100, max_count = 200
  {
    %r = corert.executeop(%cpu) "tfrt_test.matmul"(%a, %a)
      {transpose_a = false, transpose_b = false} : 1
    tfrt.return %r : !corert.tensorhandle
  }
  tfrt.return
}

// The generic form, a value the region uses without naming it among the
// operands, and the report after the chain the benchmark returns.
// CHECK-LABEL: --- Running 'generic_form'
// CHECK-NEXT: BM:generic:Duration(ns):
// CHECK-NEXT: BM:generic:Count: 3{{$}}
// CHECK: BM:generic:CPU utilization(percent):
// CHECK-NEXT: string = after
// CHECK-NEXT: 'generic_form' returned !tfrt.chain value
func.func @generic_form() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %two = tfrt.constant.i32 2
  %three = tfrt.constant.i32 3
  %done = "tfrt_test.benchmark"(%ch0) ({
    %sum = tfrt.add.i32 %two, %three
    tfrt.return %sum : i32
  }) {name = "generic", duration_secs = 10 : i32, max_count = 3 : i32,
      num_warmup_runs = 0 : i32} : (!tfrt.chain) -> !tfrt.chain
  %s = "tfrt_test.get_string"() {value = "after"} : () -> !tfrt.string
  %ch1 = "tfrt_test.print_string"(%s, %done) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}

// Each run calls the region once: warm-up runs first. Regions nest, and a
// nested region captures through the one around it.
// RUNS-LABEL: --- Running 'count_runs'
// RUNS-COUNT-6: int32 = 1
// RUNS-NOT: int32 = 1
// RUNS: BM:outer:Count: 4{{$}}
func.func @count_runs() {
  %ch0 = tfrt.new.chain
  %one = tfrt.constant.i32 1
  tfrt_test.benchmark "outer"(%ch0 : !tfrt.chain) max_count = 4, duration_secs = 60, num_warmup_runs = 2
  {
    %ch1 = tfrt.print.i32 %one, %ch0
    tfrt.return %ch1 : !tfrt.chain
  }
  tfrt.return
}

// RUNS-LABEL: --- Running 'nested'
// RUNS-NEXT: int32 = 3
// RUNS-NEXT: int32 = 3
// RUNS-NEXT: BM:inner:Duration(ns):
// RUNS-NEXT: BM:inner:Count: 2{{$}}
// RUNS-COUNT-2: BM:inner:Count: 2{{$}}
// RUNS-NOT: BM:inner:Count
// RUNS: BM:nested:Duration(ns):
// RUNS-NEXT: BM:nested:Count: 3{{$}}
func.func @nested() {
  %ch0 = tfrt.new.chain
  %one = tfrt.constant.i32 1
  %two = tfrt.constant.i32 2
  tfrt_test.benchmark "nested"(%ch0 : !tfrt.chain) max_count = 3, duration_secs = 60, num_warmup_runs = 0
  {
    %ch1 = tfrt_test.benchmark "inner"(%ch0 : !tfrt.chain) max_count = 2, duration_secs = 60, num_warmup_runs = 0
    {
      %three = tfrt.add.i32 %one, %two
      %ch2 = tfrt.print.i32 %three, %ch0
      tfrt.return %ch2 : !tfrt.chain
    }
    tfrt.return %ch1 : !tfrt.chain
  }
  tfrt.return
}

// tfrt_test.do.async runs its region once, with the values it uses (named
// among its operands or not); its results are the region's.
// RUNS-LABEL: --- Running 'do_async'
// RUNS-NEXT: int32 = 5
// RUNS-NEXT: 'do_async' returned 6
func.func @do_async() -> i32 {
  %ch0 = tfrt.new.chain
  %one = tfrt.constant.i32 1
  %two = tfrt.constant.i32 2
  %three = tfrt.constant.i32 3
  %r, %ch = tfrt_test.do.async %two, %ch0 : (i32, !tfrt.chain) -> (i32, !tfrt.chain) {
    %sum = tfrt.add.i32 %two, %three
    %ch1 = tfrt.print.i32 %sum, %ch0
    %next = tfrt.add.i32 %sum, %one
    tfrt.return %next, %ch1 : i32, !tfrt.chain
  }
  tfrt.return %r : i32
}

// A failing run ends the benchmark: its error is reported once, where it
// arose, and becomes the benchmark's chain.
// RESULTS-LABEL: --- Running 'failing_body'
// RESULTS-NEXT: 'failing_body' returned <<error: something bad happened>>
// ERRORS: benchmark.mlir:[[@LINE+5]]:10: error: runtime error: something bad happened
// ERRORS-NOT: error
func.func @failing_body() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %done = tfrt_test.benchmark "fails"(%ch0 : !tfrt.chain) max_count = 5, duration_secs = 60 {
    %x = "tfrt_test.fail"() : () -> i32
    tfrt.return %x : i32
  }
  tfrt.return %done : !tfrt.chain
}

// RESULTS-LABEL: --- Running 'zero_count'
// RESULTS-NEXT: 'zero_count' returned <<error: 'tfrt_test.benchmark': max_count must be in [1, 2147483647], got 0>>
// ERRORS-NEXT: benchmark.mlir:[[@LINE+3]]:11: error: runtime error: 'tfrt_test.benchmark': max_count must be in [1, 2147483647], got 0
func.func @zero_count() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %done = tfrt_test.benchmark "zero"(%ch0 : !tfrt.chain) max_count = 0, duration_secs = 1 {
    tfrt.return %ch0 : !tfrt.chain
  }
  tfrt.return %done : !tfrt.chain
}

// RESULTS-LABEL: --- Running 'no_name'
// RESULTS-NEXT: 'no_name' returned <<error: 'tfrt_test.benchmark' needs a 'name' attribute (a string)>>
// ERRORS-NEXT: benchmark.mlir:[[@LINE+3]]:11: error: runtime error: 'tfrt_test.benchmark' needs a 'name' attribute (a string)
func.func @no_name() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %done = "tfrt_test.benchmark"(%ch0) ({
    tfrt.return %ch0 : !tfrt.chain
  }) {duration_secs = 1 : i32, max_count = 1 : i32} : (!tfrt.chain) -> !tfrt.chain
  tfrt.return %done : !tfrt.chain
}
