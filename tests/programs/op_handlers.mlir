// Op handlers made and named by programs: corert.create_null_op_handler,
// create_cpu_op_handler (whose fallback gets the ops it does not know),
// create_logging_op_handler, register_op_handler and get_op_handler; and
// --test_init_function, which runs first (without a banner).
// RUN: not loom run --plugin %tfrt_test_ops --test_init_function=register %s 2>&1 | FileCheck %s

// CHECK-NOT: --- Running 'register'
func.func @register() {
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %ch0 = corert.register_op_handler %cpu "my_cpu"
  %ch1 = corert.register_op_handler %null "my_null"
  %log = corert.create_logging_op_handler %cpu {sync_log_results = 1}
  %ch2 = corert.register_op_handler %log "sync_logging"
  tfrt.return
}

// A registered handler, and a plugin's ops on a cpu handler a program made.
// CHECK-LABEL: --- Running 'use_registered'
func.func @use_registered() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "my_cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_from_scalar"()
      {shape = [2], value = 4 : i32} : 1
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [2], value = 8
  %b = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %ch1 = corert.print_tensorhandle(%b, %ch0)
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'use_registered' returned !tfrt.chain value

// The null handler fails every op; a cpu handler sends the ops it does not
// know to its fallback.
// CHECK-LABEL: --- Running 'null_handler'
func.func @null_handler() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = corert.get_op_handler %ch0 "my_null"
  // CHECK-NEXT: op_handlers.mlir:[[@LINE+1]]:8: error: runtime error: tfrt_test.add was not supported by NullOpHandler
  %a = corert.executeop(%null) "tfrt_test.add"() : 1
  %cpu = corert.get_op_handler %ch0 "my_cpu"
  // CHECK-NEXT: op_handlers.mlir:[[@LINE+1]]:8: error: runtime error: no.such.op was not supported by NullOpHandler
  %b = corert.executeop(%cpu) "no.such.op"() : 1
  %ch1 = corert.print_tensorhandle(%a, %ch0)
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'null_handler' returned <<error: tfrt_test.add was not supported by NullOpHandler>>

// The logging handler prints each dispatch, and with sync_log_results its
// arguments and results, then runs the op on the handler it wraps.
// CHECK-LABEL: --- Running 'logging'
func.func @logging() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %log = corert.get_op_handler %ch0 "sync_logging"
  // CHECK-NEXT: [0] dispatch 'tfrt_test.create_dense_tensor' 0 arguments, 1 result, OpAttrs contains 2 entries:
  // CHECK-NEXT:   'shape' type=I64 value=[5]
  // CHECK-NEXT:   'values' type=I32 value=[1, 2, 3, 4, 5]
  // CHECK:        Result 0: DenseHostTensor dtype = i32, shape = [5], values = [1, 2, 3, 4, 5]
  %a = corert.executeop(%log) "tfrt_test.create_dense_tensor"()
      {shape = [5], values = [1 : i32, 2 : i32, 3 : i32, 4 : i32, 5 : i32]} : 1
  // CHECK-NEXT: [1] dispatch 'tfrt_test.add' 2 arguments, 1 result, no attributes
  // CHECK-NEXT:   Arg 0: DenseHostTensor dtype = i32, shape = [5], values = [1, 2, 3, 4, 5]
  // CHECK-NEXT:   Arg 1: DenseHostTensor dtype = i32, shape = [5], values = [1, 2, 3, 4, 5]
  // CHECK-NEXT:   Result 0: DenseHostTensor dtype = i32, shape = [5], values = [2, 4, 6, 8, 10]
  %b = corert.executeop(%log) "tfrt_test.add"(%a, %a) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [5], values = [2, 4, 6, 8, 10]
  %ch1 = corert.print_tensorhandle(%b, %ch0)
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'logging' returned !tfrt.chain value

// A handler name nobody registered.
// CHECK-LABEL: --- Running 'unknown_handler'
func.func @unknown_handler() -> !corert.ophandler {
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: op_handlers.mlir:[[@LINE+1]]:10: error: runtime error: op_handler not found: gpu
  %gpu = corert.get_op_handler %ch0 "gpu"
  tfrt.return %gpu : !corert.ophandler
}
// CHECK-NEXT: 'unknown_handler' returned <<error: op_handler not found: gpu>>

// Handlers registered while a function runs, ordered by chains: a get before
// the registration fails with TFRT's text, a get after it finds the handler.
// CHECK: --- Not running 'register_custom' because it has arguments.
func.func @register_custom(%ch0: !tfrt.chain) -> !tfrt.chain {
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %ch1 = corert.register_op_handler %null "custom0"
  tfrt.return %ch1 : !tfrt.chain
}

// CHECK: --- Not running 'get_custom' because it has arguments.
func.func @get_custom(%ch0: !tfrt.chain) -> (!tfrt.chain, !corert.ophandler) {
  %h = corert.get_op_handler %ch0 "custom0"
  tfrt.return %ch0, %h : !tfrt.chain, !corert.ophandler
}

// CHECK-LABEL: --- Running 'chain_registration'
func.func @chain_registration() -> (!corert.ophandler, !corert.ophandler) {
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: op_handlers.mlir:{{[0-9]+}}:8: error: runtime error: op_handler not found: custom0
  %ch1, %before = tfrt.call @get_custom(%ch0) : (!tfrt.chain) -> (!tfrt.chain, !corert.ophandler)
  %ch2 = tfrt.call @register_custom(%ch1) : (!tfrt.chain) -> !tfrt.chain
  %ch3, %after = tfrt.call @get_custom(%ch2) : (!tfrt.chain) -> (!tfrt.chain, !corert.ophandler)
  tfrt.return %before, %after : !corert.ophandler, !corert.ophandler
}
// CHECK-NEXT: 'chain_registration' returned <<error: op_handler not found: custom0>>,!corert.ophandler value
