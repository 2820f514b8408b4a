#!/usr/bin/env bash
# Runs Loom's libFuzzer targets, one after the other, each for a given time,
# on a corpus kept between runs, and prints libFuzzer's final statistics.
#
# Usage: scripts/fuzz.sh [--seconds N] [--build DIR] [--dir DIR]
#                        [--stop-on-crash] [--update-seeds] [name...]
#                        [-- libFuzzer flags...]
#   name            op_spec, program, ops, plugin_loader (default: all four)
#   --seconds N     how long each fuzzer runs (default 3600)
#   --build DIR     the sanitizer build with the fuzzers (default build/asan,
#                   the one scripts/test.sh makes; configured and built here
#                   when the fuzzers are missing)
#   --dir DIR       where the kept corpora and crash reproducers live
#                   (default $LOOM_FUZZ_DIR, else ~/.cache/loom-fuzz):
#                   DIR/corpus/<name> and DIR/artifacts/<name>
#   --stop-on-crash stop a fuzzer at its first crash (by default each runs
#                   in libFuzzer's fork mode, one process at a time, and
#                   goes on after crashes, leaks and timeouts, saving each
#                   reproducer)
#   --update-seeds  afterwards, merge the kept corpus into the repository's
#                   seed corpus fuzz/corpus/<name> (-merge=1 adds only inputs
#                   with new coverage)
#   -- flags        passed to every fuzzer (e.g. -jobs=2, -only_ascii=1)
#
# Each run starts from the kept corpus and the repository's seeds; what it
# finds lands in the kept corpus, which is then minimised with -merge=1.
# Reproducers land in DIR/artifacts/<name>; the exit status is 1 if any
# fuzzer found one in this run.
# Reproduce one with: <build>/fuzz/fuzz_<name> <reproducer>.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=3600
build="$root/build/asan"
dir="${LOOM_FUZZ_DIR:-${HOME:-/tmp}/.cache/loom-fuzz}"
update_seeds=0
stop_on_crash=0
names=()
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --update-seeds) update_seeds=1; shift ;;
    --stop-on-crash) stop_on_crash=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    op_spec|program|ops|plugin_loader) names+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ ${#names[@]} -eq 0 ]; then
  names=(op_spec program ops plugin_loader)
fi

missing=0
for name in "${names[@]}"; do
  [ -x "$build/fuzz/fuzz_$name" ] || missing=1
done
if [ $missing = 1 ]; then
  echo "== building the fuzzers in $build"
  CC=clang CXX=clang++ "$root/scripts/build.sh" "$build" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLOOM_SANITIZE=address,undefined -DLOOM_BUILD_FUZZERS=ON \
    -DLOOM_BUILD_BENCH=OFF
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for name in "${names[@]}"; do
  fuzzer="$build/fuzz/fuzz_$name"
  kept="$dir/corpus/$name"
  artifacts="$dir/artifacts/$name"
  seeds="$root/fuzz/corpus/$name"
  mkdir -p "$kept" "$artifacts"
  flags=(-rss_limit_mb=2048 -timeout=25 -print_final_stats=1
         -artifact_prefix="$artifacts/")
  if [ -f "$root/fuzz/$name.dict" ]; then
    flags+=(-dict="$root/fuzz/$name.dict")
  fi
  if [ $stop_on_crash = 0 ]; then
    # Fork mode also suits fuzz_plugin_loader: the registries keep what a
    # rollback unregistered, so one long process would slow down.
    flags+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  fi
  echo "== fuzz_$name for $seconds s (corpus $kept)"
  status=0
  stamp="$dir/.start-$name"
  touch "$stamp"
  "$fuzzer" "${flags[@]}" -max_total_time="$seconds" "${extra[@]}" \
    "$kept" "$seeds" || status=$?
  found=$(find "$artifacts" -type f -newer "$stamp" | wc -l)
  rm -f "$stamp"
  if [ $status != 0 ] || [ "$found" != 0 ]; then
    echo "== fuzz_$name: status $status, $found new reproducers in" \
      "$artifacts"
    failed+=("$name")
  fi
  # Keep only the inputs that add coverage.
  merged="$kept.merge"
  rm -rf "$merged"
  mkdir -p "$merged"
  if "$fuzzer" -merge=1 -rss_limit_mb=2048 -timeout=25 \
      -artifact_prefix="$artifacts/" "$merged" "$kept" >"$dir/merge.log" 2>&1
  then
    rm -rf "$kept"
    mv "$merged" "$kept"
  else
    echo "== merging the corpus of fuzz_$name failed: $dir/merge.log"
    rm -rf "$merged"
  fi
  echo "== fuzz_$name: $(ls "$kept" | wc -l) inputs kept in $kept"
  if [ $update_seeds = 1 ]; then
    "$fuzzer" -merge=1 -rss_limit_mb=2048 -timeout=25 "$seeds" "$kept" \
      >"$dir/merge.log" 2>&1 || echo "== updating $seeds failed"
    echo "== fuzz/corpus/$name: $(ls "$seeds" | wc -l) seeds"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "== crashed: ${failed[*]} (reproducers in $dir/artifacts)"
  exit 1
fi
