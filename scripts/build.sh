#!/usr/bin/env bash
# Configures and builds Loom into a build directory; prints the build log
# only when something fails.
# Usage: scripts/build.sh <build-dir> [cmake options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S "$root" -B "$build_dir" -G Ninja "$@" &&
       cmake --build "$build_dir" -- -j"$(nproc)"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "build of $build_dir failed" >&2
  exit 1
fi
echo "built $build_dir"
