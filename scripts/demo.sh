#!/usr/bin/env bash
# Loom's main job: installs what is missing, builds, and runs the example.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" build
"$root/scripts/build.sh" "$root/build/release" -DCMAKE_BUILD_TYPE=Release \
  -DLOOM_BUILD_TESTS=OFF -DLOOM_BUILD_BENCH=OFF
exec "$root/build/release/examples/hello_loom" "$@"
