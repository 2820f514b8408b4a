// The command line: help, usage errors, --functions, --timing, standard
// input, `check`, and errors that are not the program's.
// RUN: loom --help | FileCheck %s --check-prefix=HELP
// HELP: usage: loom run [options] <file.mlir | ->
// HELP: --functions=F,G
// HELP: --test_init_function=F
// HELP: --verify-diagnostics
// HELP: --plugin=PATH
// HELP: --split-input-file
// HELP: --devices=cpu,null
// HELP: --work_queue_type=T
// HELP: --host_allocator_type=A
// HELP: --max-call-depth=N
// HELP: --max-calls-in-flight=N

// RUN: not loom run --bogus %s 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: loom: unknown option '--bogus'
// RUN: not loom xyz %s 2>&1 | FileCheck %s --check-prefix=COMMAND
// COMMAND: loom: unknown command 'xyz'; commands: run, check
// RUN: not loom 2>&1 | FileCheck %s --check-prefix=NOCOMMAND
// NOCOMMAND: loom: no command; commands: run, check
// RUN: not loom run --max-calls-in-flight=0 %s 2>&1 | FileCheck %s --check-prefix=INFLIGHT
// INFLIGHT: loom: --max-calls-in-flight needs a number in [1, 2147483647], got '0'
// RUN: not loom run --max-call-depth=99999999999 %s 2>&1 | FileCheck %s --check-prefix=DEPTH
// DEPTH: loom: --max-call-depth needs a number in [1, 2147483647], got '99999999999'
// RUN: not loom run 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: loom: no input file
// RUN: not loom run --threads=x %s 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: loom: --threads needs a number in [0, 1024], got 'x'

// RUN: not loom run %S/inputs/does_not_exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: loom: error: cannot read '{{.*}}does_not_exist.mlir': No such file or directory
// RUN: not loom run --plugin=%S/inputs/no_plugin.so %s 2>&1 | FileCheck %s --check-prefix=PLUGIN
// PLUGIN: loom: error: cannot load plugin '{{.*}}no_plugin.so'
// RUN: not loom run --functions=nowhere %s 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOFUNC: loom: error: {{.*}}cli.mlir: couldn't find function 'nowhere'

// bef_executor's flags, as TFRT's RUN lines give them: -devices names op
// handlers the runtime has, --work_queue_type picks the threads, and
// --host_allocator_type is accepted.
// RUN: loom run -devices=cpu,null --work_queue_type=s --host_allocator_type=malloc -functions=first %s | FileCheck %s --check-prefix=BEF
// RUN: loom run --work_queue_type=mstd:2,4 -functions=first %s | FileCheck %s --check-prefix=BEF
// RUN: loom run --work_queue_type mstd -functions=first %s | FileCheck %s --check-prefix=BEF
// BEF: --- Running 'first':
// BEF-NEXT: 'first' returned 1
// RUN: not loom run -devices=cpu,gpu %s 2>&1 | FileCheck %s --check-prefix=DEVICES
// DEVICES: loom: --devices: no op handler 'gpu'; Loom's runtime has cpu and null (register others in a --test_init_function)
// RUN: not loom run --work_queue_type=mstd:0 %s 2>&1 | FileCheck %s --check-prefix=QUEUE
// QUEUE: loom: --work_queue_type needs s or mstd[:N[,M]] with N and M in [1, 1024], got 'mstd:0'
// RUN: not loom run --work_queue_type=mstd:2,x %s 2>&1 | FileCheck %s --check-prefix=QUEUE2
// QUEUE2: loom: --work_queue_type needs s or mstd[:N[,M]] with N and M in [1, 1024], got 'mstd:2,x'

// --functions picks and orders functions; -name is --name.
// RUN: loom run -functions=second,first %s | FileCheck %s --check-prefix=PICK
// PICK: --- Running 'second':
// PICK-NEXT: 'second' returned 2
// PICK-NEXT: --- Running 'first':
// PICK-NEXT: 'first' returned 1

// Standard input, and the times.
// RUN: cat %s | loom run --timing - 2>&1 | FileCheck %s --check-prefix=STDIN
// STDIN: 'first' returned 1
// STDIN: loom: parsed <stdin> in {{[0-9.]+}} ms (4 ops), ran in {{[0-9.]+}} ms

// `check` parses only.
// RUN: loom check %s | count 0

// A program with an unknown kernel does not run.
// RUN: not loom run %S/inputs/unknown_kernel.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown_kernel.mlir:5:8: error: 'tfrt_test.not_a_kernel' is not a known kernel (load the plugin that provides it with --plugin)
// UNKNOWN-NEXT: unknown_kernel.mlir:7:8: error: 'tfrt.add.i32' takes 2 arguments, got 1
// UNKNOWN-NOT: Running

func.func @first() -> i32 {
  %x = tfrt.constant.i32 1
  tfrt.return %x : i32
}

func.func @second() -> i32 {
  %x = tfrt.constant.i32 2
  tfrt.return %x : i32
}
