#!/usr/bin/env bash
# The whole test suite: installs what is missing, then
#   1. builds with -Werror and runs every test (CTest);
#   2. rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer (which
#      includes LeakSanitizer) and runs every test again;
#   3. rebuilds with ThreadSanitizer and runs the tests labelled "threaded".
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
"$root/scripts/build.sh" "$root/build/test" -DLOOM_WERROR=ON
run_ctest "$root/build/test"

echo "== unit tests under ASan + UBSan"
"$root/scripts/build.sh" "$root/build/asan" -DLOOM_WERROR=ON \
  -DLOOM_SANITIZE=address,undefined -DLOOM_BUILD_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest "$root/build/asan"

echo "== threaded tests under TSan"
"$root/scripts/build.sh" "$root/build/tsan" -DLOOM_WERROR=ON \
  -DLOOM_SANITIZE=thread -DLOOM_BUILD_BENCH=OFF
# TSan needs a narrow address-space layout; setarch -R disables
# randomisation where the kernel's mmap entropy would otherwise upset it.
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  norandom=(setarch "$(uname -m)" -R)
fi
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  "${norandom[@]}" ctest --test-dir "$root/build/tsan" --output-on-failure \
  -j"$jobs" -L threaded

echo "== all test stages passed"
