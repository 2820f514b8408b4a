#!/usr/bin/env bash
# Builds Loom in Release mode and runs the benchmarks beside their PyTorch /
# NumPy counterparts, in one run. Prints "name median unit" lines, then one
# ratio line per pair declared in bench/*.pairs (how Loom compares).
#
#   scripts/bench.sh [--quick] [--rounds N] [GROUP...]
#
# GROUP (e.g. kernels_nn, corert) runs only bench/bench_GROUP and its
# references, with the ratios of bench/GROUP.pairs.
#
# --rounds N runs each group's Loom benchmark and its references N times,
# alternately, and then reports each figure's median over the rounds and
# the ratios of those medians: on a machine shared with other work, load
# that comes and goes then weighs on both sides alike.
#
# Loom's benchmarks are the bench/bench_* programs; the references are the
# bench/GROUP_reference.py scripts, run with Debian's /usr/bin/python3 (NumPy,
# PyTorch), each followed by the group's libtorch (C++) reference when it was
# built: bench/GROUP_reference_libtorch.cpp, so far for train only, built when
# CMake finds Debian's libtorch-dev. A .pairs line
# "loom_figure reference_figure [time|rate]" prints reference/loom for times
# (higher: Loom faster) and loom/reference for rates (higher: Loom faster).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
options=()
groups=()
rounds=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds | --rounds=*)
      if [ "$1" = --rounds ]; then
        rounds="${2:-}"
        shift
      else
        rounds="${1#--rounds=}"
      fi
      if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
        echo "bench.sh: --rounds needs a positive count" >&2
        exit 2
      fi
      ;;
    --*) options+=("$1") ;;
    *) groups+=("$1") ;;
  esac
  shift
done
if [ ${#groups[@]} -eq 0 ]; then
  for pairs in "$root"/bench/*.pairs; do
    groups+=("$(basename "$pairs" .pairs)")
  done
  for bench in "$root"/bench/bench_*.c; do
    name=$(basename "$bench" .c)
    [ -e "$root/bench/${name#bench_}.pairs" ] || groups+=("${name#bench_}")
  done
fi
"$root/scripts/install-deps.sh" bench
"$root/scripts/build.sh" "$root/build/release" -DCMAKE_BUILD_TYPE=Release \
  -DLOOM_LTO=ON -DLOOM_BUILD_TESTS=OFF -DLOOM_BENCH_LIBTORCH=ON
# OpenBLAS tuning variables set on some machines would skew comparisons:
# the benchmarks run without them (tests leave them alone).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE

out=$(mktemp)
medians=$(mktemp)
trap 'rm -f "$out" "$medians"' EXIT
libtorch=""
if compgen -G "$root/build/release/bench/*_reference_libtorch" >/dev/null; then
  version=$(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo '?')
  libtorch=", libtorch ${version%%[+-]*}"
fi
references="pytorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'),\
 numpy $(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')$libtorch"

# One round: Loom's benchmarks, then the references.
run_round() {
  echo "# loom"
  for group in "${groups[@]}"; do
    bench="$root/build/release/bench/bench_$group"
    if [ -x "$bench" ]; then "$bench" "${options[@]}" | tee -a "$out"; fi
  done
  echo "# references: $references"
  for group in "${groups[@]}"; do
    reference="$root/bench/${group}_reference.py"
    if [ -e "$reference" ]; then
      /usr/bin/python3 "$reference" "${options[@]}" | tee -a "$out"
    fi
    reference="$root/build/release/bench/${group}_reference_libtorch"
    if [ -x "$reference" ]; then
      "$reference" "${options[@]}" | tee -a "$out" ||
        echo "# $reference failed: its figures are left out"
    fi
  done
}

for ((round = 1; round <= rounds; ++round)); do
  if [ "$rounds" -gt 1 ]; then echo "# round $round of $rounds"; fi
  run_round
done
# Each figure's median over the rounds (the figure itself for one round;
# of an even count, the lower middle one), printed as it was measured.
awk '
  NF >= 2 && $1 !~ /^#/ && $2 ~ /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ {
    if (!($1 in count)) { order[++names] = $1; unit[$1] = $3 }
    samples[$1, ++count[$1]] = $2
  }
  END {
    for (i = 1; i <= names; ++i) {
      name = order[i]; n = count[name]
      for (j = 1; j <= n; ++j) v[j] = samples[name, j]
      for (j = 2; j <= n; ++j) {  # insertion sort, n is small
        x = v[j]
        for (k = j - 1; k >= 1 && v[k] + 0 > x + 0; --k) v[k + 1] = v[k]
        v[k + 1] = x
      }
      printf "%s %s %s\n", name, v[int((n + 1) / 2)], unit[name]
    }
  }' "$out" > "$medians"
if [ "$rounds" -gt 1 ]; then
  echo "# medians over $rounds rounds"
  cat "$medians"
fi

echo "# ratios (above 1: Loom is faster)"
for group in "${groups[@]}"; do
  pairs="$root/bench/$group.pairs"
  if [ -e "$pairs" ]; then cat "$pairs"; fi
done | awk -v figures="$medians" '
  BEGIN {
    while ((getline line < figures) > 0) {
      split(line, f, " ")
      value[f[1]] = f[2]
    }
  }
  /^[^#]/ && NF >= 2 {
    loom = $1; ref = $2; kind = (NF >= 3 ? $3 : "time")
    if (!(loom in value) || !(ref in value) || value[loom] <= 0 ||
        value[ref] <= 0) next
    ratio = kind == "rate" ? value[loom] / value[ref] : value[ref] / value[loom]
    printf "ratio_%s_vs_%s %.2f x\n", loom, ref, ratio
  }'
