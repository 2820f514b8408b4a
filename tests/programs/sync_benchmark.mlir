// tfrt_test.sync_benchmark runs a function that returns nothing over and
// over (num_warmup_runs first, unmeasured) and prints TFRT's benchmark
// report, named after the function. A run ends when the function's last
// operation has.
// RUN: loom run --plugin %tfrt_test_ops -functions=BM_sync_matmul %s | FileCheck %s
// RUN: loom run -functions=count_runs %s | FileCheck %s --check-prefix=RUNS
// RUN: not loom run -functions=zero_count %s 2>&1 | FileCheck %s --check-prefix=ERRORS

func.func @matmul_sync(%cpu : !corert.ophandler, %a : !corert.tensorhandle) attributes {tfrt.sync} {
  %r = corert_sync.executeop(%cpu) "tfrt_test.matmul"(%a, %a)
      {transpose_a = false, transpose_b = false} : 1
  tfrt.return
}

// CHECK-LABEL: --- Running 'BM_sync_matmul'
// CHECK-NEXT: BM:matmul_sync:Duration(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:Count: 50{{$}}
// CHECK-NEXT: BM:matmul_sync:Time Min(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:Time 50%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:Time 95%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:Time 99%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:CPU Min(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:CPU 50%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:CPU 95%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:CPU 99%(ns): {{[0-9]+$}}
// CHECK-NEXT: BM:matmul_sync:CPU utilization(percent): {{[0-9.]+e[+-][0-9]+$}}
// CHECK-NOT: BM:
func.func @BM_sync_matmul() attributes {tfrt.sync} {
  %cpu = corert_sync.get_op_handler "cpu"
  %a = corert_sync.executeop(%cpu) "tfrt_test.create_dense_tensor"()
      {shape = [2, 2], values = [2.0 : f32, 0.0 : f32, 0.0 : f32, 2.0 : f32]} : 1
  tfrt_test.sync_benchmark @matmul_sync(%cpu : !corert.ophandler, %a : !corert.tensorhandle)
      duration_secs = 100, max_count = 50, num_warmup_runs = 5
  tfrt.return
}

// Each run prints once: two warm-up runs, then three measured.
func.func @print_one(%t : !t.tensor) attributes {tfrt.sync} {
  tfrt_dht_sync.print_tensor %t
  tfrt.return
}

// RUNS-LABEL: --- Running 'count_runs'
// RUNS-COUNT-5: DenseHostTensor dtype = i32, shape = [1], values = [9]
// RUNS-NEXT: BM:print_one:Duration(ns):
// RUNS-NEXT: BM:print_one:Count: 3{{$}}
func.func @count_runs() attributes {tfrt.sync} {
  %t = "tfrt_dht_sync.create_dense_tensor.i32"() {shape = [1], values = [9 : i32]} : () -> !t.tensor
  tfrt_test.sync_benchmark @print_one(%t : !t.tensor)
      duration_secs = 100, max_count = 3, num_warmup_runs = 2
  tfrt.return
}

// ERRORS: sync_benchmark.mlir:[[@LINE+3]]:3: error: runtime error: 'tfrt_test.sync_benchmark': max_count must be in [1, 2147483647], got 0
func.func @zero_count() attributes {tfrt.sync} {
  %t = "tfrt_dht_sync.create_dense_tensor.i32"() {shape = [1], values = [9 : i32]} : () -> !t.tensor
  tfrt_test.sync_benchmark @print_one(%t : !t.tensor) duration_secs = 1, max_count = 0
  tfrt.return
}
