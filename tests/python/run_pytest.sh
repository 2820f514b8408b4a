#!/bin/sh
# Runs the Python front end's test suite (python/tests) against a build:
# scripts/python-venv.sh installs the `loom` package linked to the build's
# libloom.so into a venv in the build directory, then pytest runs.
# Usage: run_pytest.sh <source dir> <build dir> [python3]
# Exits 77 (CTest's skip) when python3-dev, python3-venv, NumPy or pytest is
# missing: scripts/install-deps.sh test installs them.
set -eu
src=$1
build=$2
python=${3:-/usr/bin/python3}

if ! "$python" -c 'import pytest' 2>/dev/null; then
  echo "needs python3-pytest: scripts/install-deps.sh test" >&2
  exit 77
fi
status=0
venv_python=$(sh "$src/scripts/python-venv.sh" "$src" "$build" "$python") ||
  status=$?
[ "$status" -eq 0 ] || exit "$status"

cd "$build"
export PYTHONDONTWRITEBYTECODE=1
exec "$venv_python" -m pytest -q -p no:cacheprovider "$src/python/tests"
