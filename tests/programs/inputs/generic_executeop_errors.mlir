// Syntax errors of corert.executeop's generic form (generic_executeop.mlir).

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{'corert.executeop' needs the op to execute: op_name = "..."}}
  %a = "corert.executeop"(%cpu) {op_attrs = []} : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{'op_name' must be a non-empty string without NUL bytes}}
  %a = "corert.executeop"(%cpu) {op_name = 3} : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{'op_attrs' item 0 must be a ["key", value] pair with a non-empty key}}
  %a = "corert.executeop"(%cpu) {op_attrs = [[1, 2]], op_name = "tf.X"} : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{'op_attrs' must be an array of ["key", value] pairs}}
  %a = "corert.executeop"(%cpu) {op_attrs = 1, op_name = "tf.X"} : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{duplicate key 'T' in 'op_attrs'}}
  %a = "corert.executeop"(%cpu) {op_attrs = [["T", f32], ["T", i32]], op_name = "tf.X"} : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{function attribute 'then' must name a function ("name" or @name)}}
  %a = "corert.executeop"(%cpu) {op_func_attrs = [["then", 1]], op_name = "tf.X"} : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @f(%ch: !tfrt.chain) {
  // expected-error @+1 {{'corert.executeop' expects operand #0 of type '!corert.ophandler', got a value of type '!tfrt.chain'}}
  %a = "corert.executeop"(%ch) {op_name = "tf.X"} : (!tfrt.chain) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{'corert.executeop.seq' needs an op handler and a chain as its first operands}}
  %a = "corert.executeop.seq"(%cpu) {op_name = "tf.X"} : (!corert.ophandler) -> !tfrt.chain
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler, %ch: !tfrt.chain) {
  // expected-error @+1 {{'corert.executeop.seq' result #0 must be of type '!tfrt.chain', got '!corert.tensorhandle'}}
  %a = "corert.executeop.seq"(%cpu, %ch) {op_name = "tf.X"} : (!corert.ophandler, !tfrt.chain) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{'corert_sync.executeop' result #0 must be of type '!corert.tensorhandle', got 'i32'}}
  %a = "corert_sync.executeop"(%cpu) {op_name = "tf.X"} : (!corert.ophandler) -> i32
  tfrt.return
}

// -----

func.func @f(%cpu: !corert.ophandler) {
  // expected-error @+1 {{expected '{' to begin the attributes (op_name, op_attrs), got ':'}}
  %a = "corert.executeop"(%cpu) : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return
}
