func.func @f() -> i32 {
  %ch0 = tfrt.new.chain
  %one = tfrt.constant.i32 1
  %r, %ch = tfrt_test.do.async %one, %ch0 : (i32, !tfrt.chain) -> (i32, !tfrt.chain) {
    %two = tfrt.add.i32 %one, %one
    tfrt.return %two, %ch0 : i32, !tfrt.chain
  }
  tfrt_test.benchmark "bm"(%ch0 : !tfrt.chain) max_count = 2, duration_secs = 1 {
    %x = "tfrt_test.benchmark"(%ch0) ({
      tfrt.return %ch0 : !tfrt.chain
    }) {name = "inner", max_count = 1 : i32, duration_secs = 1 : i32, num_warmup_runs = 0 : i32} : (!tfrt.chain) -> !tfrt.chain
    tfrt.return %x : !tfrt.chain
  }
  tfrt.return %r : i32
}
