// Syntax errors of the corert_sync dialect's custom forms (corert_sync.mlir).

func.func @f() attributes {tfrt.sync} {
  // expected-error @+1 {{expected the op handler's name (a string), got '42'}}
  %cpu = corert_sync.get_op_handler 42
  tfrt.return
}

// -----

func.func @f() attributes {tfrt.sync} {
  %cpu = corert_sync.get_op_handler "cpu"
  // expected-error @+1 {{expected the name of the op to execute (a string), got '{'}}
  %a = corert_sync.executeop(%cpu) {op_attrs = [], op_name = "tf.X"} : 1
  tfrt.return
}

// -----

func.func @f() attributes {tfrt.sync} {
  %cpu = corert_sync.get_op_handler "cpu"
  // expected-error @+1 {{expected a dense attribute (dense<...> : tensor<...>), got '1'}}
  %a = corert_sync.const_dense_tensor 1
  tfrt.return
}

// -----

func.func @f(%h: !corert.ophandler) attributes {tfrt.sync} {
  // expected-error @+1 {{'corert_sync.print_tensorhandle' expects operand #0 of type '!corert.tensorhandle', got a value of type '!corert.ophandler'}}
  corert_sync.print_tensorhandle %h
  tfrt.return
}
