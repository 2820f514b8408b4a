#!/usr/bin/env bash
# Installs the Debian packages Loom needs for a task, skipping those already
# present. Usage: scripts/install-deps.sh build|test|bench|demo
#   build  compiler, CMake, Ninja, OpenBLAS, SLEEF, protobuf-c (protoc-c and
#          libprotobuf-c: TensorFlow's serialized op and kernel lists)
#   test   build + cmocka, valgrind, clang with libFuzzer, NumPy (the
#          reference values of the kernel conformance tests), PyTorch (those
#          of the gradient tests), LLVM's lit and FileCheck (llvm-14-tools:
#          the programs of tests/programs), python3-protobuf (decodes
#          the serialized op lists in tests/plugin), python3-dev,
#          python3-venv, python3-setuptools and python3-pytest (the Python
#          front end, python/, built in a venv and tested with pytest),
#          OpenMPI (libopenmpi-dev, openmpi-bin: the MPI collective backend
#          and its mpirun tests)
#   bench  build + NumPy, PyTorch and libtorch-dev (the reference
#          implementations; libtorch-dev for bench/train_reference_libtorch),
#          python3-dev, python3-venv and python3-setuptools (the `loom`
#          package for bench/python_tiny_op.py)
#   demo   build + zlib and Fashion-MNIST (dataset-fashion-mnist) for the
#          training demo, examples/fashion_mnist
set -euo pipefail

profile=${1:-build}
packages=(build-essential cmake ninja-build pkg-config libopenblas-dev
          libsleef-dev protobuf-c-compiler libprotobuf-c-dev)
case "$profile" in
  build) ;;
  test) packages+=(libcmocka-dev valgrind clang libclang-rt-14-dev python3-numpy
                  python3-torch llvm-14-tools python3-protobuf python3-dev
                  python3-venv python3-setuptools python3-pytest
                  libopenmpi-dev openmpi-bin) ;;
  bench) packages+=(python3-numpy python3-torch libtorch-dev libopenmpi-dev
                   openmpi-bin python3-dev python3-venv python3-setuptools) ;;
  demo) packages+=(zlib1g-dev dataset-fashion-mnist) ;;
  *) echo "usage: $0 build|test|bench|demo" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
