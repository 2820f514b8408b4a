#!/bin/sh
# Makes a venv in a build directory (once; it sees Debian's NumPy, PyTorch
# and pytest) and installs the `loom` package linked to that build's
# libloom.so into it (again only when the package's sources changed).
# Prints the venv's python. Used by the Python tests and the benchmarks.
# Usage: python-venv.sh <source dir> <build dir> [python3]
# Exits 77 (CTest's skip) when python3-dev, python3-venv, NumPy or
# setuptools is missing: scripts/install-deps.sh test installs them.
set -eu
src=$1
build=$2
python=${3:-/usr/bin/python3}
venv=$build/python-venv
stage=$build/python-src

if ! "$python" - <<'PY' >&2
import os, sys, sysconfig
try:
    import ensurepip, numpy, setuptools, venv  # noqa: F401
except ImportError as error:
    sys.exit(f"skipped: {error}")
include = sysconfig.get_paths()["include"]
if not os.path.exists(os.path.join(include, "Python.h")):
    sys.exit("skipped: no Python.h (python3-dev)")
PY
then
  echo "needs python3-dev, python3-venv, python3-numpy, python3-setuptools:" \
       "scripts/install-deps.sh test" >&2
  exit 77
fi

[ -x "$venv/bin/python" ] ||
  "$python" -m venv --system-site-packages "$venv" >&2

stamp=$venv/.loom-installed
if [ ! -f "$stamp" ] || [ -n "$(find "$src/python" -newer "$stamp" \
    -not -path '*/__pycache__*' 2>/dev/null | head -n 1)" ]; then
  # Build from a copy, so that setuptools' build/ and egg-info stay out of
  # the source tree.
  rm -rf "$stage"
  mkdir -p "$stage"
  cp -R "$src/python/." "$stage"
  LOOM_SOURCE_DIR=$src LOOM_BUILD_DIR=$build \
    "$venv/bin/python" -m pip install --quiet --no-build-isolation \
    --no-deps --no-index --disable-pip-version-check "$stage" >&2
  touch "$stamp"
fi
echo "$venv/bin/python"
