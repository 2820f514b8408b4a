#!/usr/bin/env bash
# The whole test suite: installs what is missing, then
#   1. builds with -Werror and runs every test (CTest);
#   2. rebuilds with clang, AddressSanitizer + UndefinedBehaviorSanitizer
#      (which includes LeakSanitizer) and the libFuzzer targets, and runs
#      every test again (a second compiler's view of the code, its
#      warnings errors too);
#   3. rebuilds with ThreadSanitizer and runs the tests labelled "threaded";
#   4. runs the other unit tests of build 1 under valgrind's memcheck;
#   5. fuzzes, with the libFuzzer targets of build 2, the op spec parser for
#      30 seconds, the program parser for 20, every op through TFE_Execute
#      for 30 and the plugin loader's registrations and rollbacks for 30,
#      each starting from a copy of its corpus (scripts/fuzz.sh runs them
#      for longer).
# Stage 1 and 2 include the programs of tests/programs, run by tools/loom
# under LLVM's lit and FileCheck (the CTest test programs_lit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
"$root/scripts/install-deps.sh" test

run_ctest() {
  local dir=$1
  shift
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" "$@"
}

echo "== unit tests"
# The default build (Release, link-time optimisation): what users link.
# -g1 (line tables only) names lines in the valgrind stage's reports; full
# debug information would triple the size of the ~130 statically linked
# test programs, and the three build trees must fit a small disk.
"$root/scripts/build.sh" "$root/build/test" -DLOOM_WERROR=ON -DCMAKE_C_FLAGS=-g1
run_ctest "$root/build/test"

echo "== unit tests under ASan + UBSan (clang)"
# Sanitizer reports need only line tables, as above.
debug_lines=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
CC=clang CXX=clang++ "$root/scripts/build.sh" "$root/build/asan" \
  "${debug_lines[@]}" -DLOOM_WERROR=ON \
  -DLOOM_SANITIZE=address,undefined -DLOOM_BUILD_FUZZERS=ON \
  -DLOOM_BUILD_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest "$root/build/asan"

echo "== threaded tests under TSan"
"$root/scripts/build.sh" "$root/build/tsan" -DLOOM_WERROR=ON \
  "${debug_lines[@]}" -DLOOM_SANITIZE=thread \
  -DLOOM_BUILD_BENCH=OFF
# TSan needs a narrow address-space layout; setarch -R disables
# randomisation where the kernel's mmap entropy would otherwise upset it.
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  norandom=(setarch "$(uname -m)" -R)
fi
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  "${norandom[@]}" ctest --test-dir "$root/build/tsan" --output-on-failure \
  -j"$jobs" -L threaded
# Nothing later uses the TSan tree: give its space back.
rm -rf "$root/build/tsan"

echo "== unit tests under valgrind"
# The unit tests not labelled "threaded" (those ran under TSan), from the
# plain build, less the benchmarks' quick runs, the header compile check,
# the layer checks, the Python that writes the conformance and gradient
# cases, lit running the programs (no Loom code of their own worth
# checking, and slow under valgrind; the case files stage 1 generated are
# reused: -FS skips their fixtures), the Python front end's pytest run
# (valgrind would check only the shell that starts it), the mpirun runs
# (valgrind would check mpirun; the same program's --threads runs are
# checked under TSan), and the demo's 20 training steps, eager and traced
# (minutes under valgrind; test_fashion_mnist_step and test_function_plan
# run the same code on small inputs).
# LOOM_ALLOCATOR_CACHE=0 sends every block to malloc and free, so memcheck
# sees each one. Only definite leaks fail the stage: memory kept for the
# life of the process (the registries) is still reachable.
memcheck_logs="$root/build/test/Testing/Temporary"
rm -f "$memcheck_logs"/MemoryChecker.*.log
if ! LOOM_ALLOCATOR_CACHE=0 ctest --test-dir "$root/build/test" -j"$jobs" \
    --output-on-failure -LE threaded \
    -E '^(public_headers_compile_alone|layer_symbols|layer_includes|bench_.*_quick|kernel_conformance_cases|gradient_cases|programs_lit|test_python|test_collective_mpi_np[0-9]+|fashion_mnist_smoke|fashion_mnist_traced_smoke)$' \
    -FS '^(kernel_conformance_cases|gradient_cases)$' \
    -T memcheck \
    --overwrite MemoryCheckCommand="$(command -v valgrind)" \
    --overwrite "MemoryCheckCommandOptions=-q --error-exitcode=1 \
--leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
--track-origins=yes --num-callers=30"; then
  for log in "$memcheck_logs"/MemoryChecker.*.log; do
    if [ -s "$log" ]; then
      echo "-- $log"
      cat "$log"
    fi
  done
  exit 1
fi

echo "== fuzzing the op spec parser (30 s)"
fuzz_dir="$root/build/asan"
# libFuzzer adds what it finds to the corpus directory: fuzz a copy so the
# repository's corpus stays as it is; crash reproducers go to the build tree.
rm -rf "$fuzz_dir/corpus" "$fuzz_dir/artifacts"
mkdir -p "$fuzz_dir/corpus" "$fuzz_dir/artifacts"
cp "$root"/fuzz/corpus/op_spec/* "$fuzz_dir/corpus/"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$fuzz_dir/fuzz/fuzz_op_spec" -max_total_time=30 -rss_limit_mb=2048 \
  -timeout=10 -dict="$root/fuzz/op_spec.dict" \
  -artifact_prefix="$fuzz_dir/artifacts/" -print_final_stats=1 \
  "$fuzz_dir/corpus"

echo "== fuzzing the program parser (20 s)"
rm -rf "$fuzz_dir/corpus_program"
mkdir -p "$fuzz_dir/corpus_program"
cp "$root"/fuzz/corpus/program/* "$fuzz_dir/corpus_program/"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$fuzz_dir/fuzz/fuzz_program" -max_total_time=20 -rss_limit_mb=2048 \
  -timeout=10 -dict="$root/fuzz/program.dict" \
  -artifact_prefix="$fuzz_dir/artifacts/" -print_final_stats=1 \
  "$fuzz_dir/corpus_program"

# fuzz_ops runs every registered op with random attrs and inputs, huge
# dimensions beside a 0 included; its __asan_default_options caps single
# allocations, so a kernel asked for a huge output must fail cleanly.
echo "== fuzzing every op (30 s)"
rm -rf "$fuzz_dir/corpus_ops"
mkdir -p "$fuzz_dir/corpus_ops"
cp "$root"/fuzz/corpus/ops/* "$fuzz_dir/corpus_ops/"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$fuzz_dir/fuzz/fuzz_ops" -max_total_time=30 -rss_limit_mb=2048 \
  -timeout=25 -artifact_prefix="$fuzz_dir/artifacts/" -print_final_stats=1 \
  "$fuzz_dir/corpus_ops"

echo "== fuzzing the plugin loader's registrations (30 s)"
rm -rf "$fuzz_dir/corpus_plugin_loader"
mkdir -p "$fuzz_dir/corpus_plugin_loader"
cp "$root"/fuzz/corpus/plugin_loader/* "$fuzz_dir/corpus_plugin_loader/"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$fuzz_dir/fuzz/fuzz_plugin_loader" -max_total_time=30 -rss_limit_mb=2048 \
  -timeout=10 -dict="$root/fuzz/plugin_loader.dict" \
  -artifact_prefix="$fuzz_dir/artifacts/" -print_final_stats=1 \
  "$fuzz_dir/corpus_plugin_loader"

echo "== all test stages passed"
