#!/bin/sh
# Runs the Python front end's test suite (python/tests) against a build:
# makes a venv in the build directory (once; it sees Debian's NumPy, PyTorch
# and pytest), installs the `loom` package linked to the build's libloom.so
# (again only when the package's sources changed), then runs pytest.
# Usage: run_pytest.sh <source dir> <build dir> [python3]
# Exits 77 (CTest's skip) when python3-dev, python3-venv, NumPy or pytest is
# missing: scripts/install-deps.sh test installs them.
set -eu
src=$1
build=$2
python=${3:-/usr/bin/python3}
venv=$build/python-venv
stage=$build/python-src

if ! "$python" - <<'PY'
import os, sys, sysconfig
try:
    import ensurepip, numpy, pytest, setuptools, venv  # noqa: F401
except ImportError as error:
    sys.exit(f"skipped: {error}")
include = sysconfig.get_paths()["include"]
if not os.path.exists(os.path.join(include, "Python.h")):
    sys.exit("skipped: no Python.h (python3-dev)")
PY
then
  echo "needs python3-dev, python3-venv, python3-numpy, python3-pytest:" \
       "scripts/install-deps.sh test" >&2
  exit 77
fi

[ -x "$venv/bin/python" ] ||
  "$python" -m venv --system-site-packages "$venv"

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
    --no-deps --no-index --disable-pip-version-check "$stage"
  touch "$stamp"
fi

cd "$build"
export PYTHONDONTWRITEBYTECODE=1
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$src/python/tests"
