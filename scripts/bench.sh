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
#
# The same figures and ratios also go to bench/RESULTS.md (--results FILE
# writes them elsewhere), with what they were measured on: the machine, the
# date, the commit, the commands and the reference versions. The file is
# generated; stdout is unchanged by it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command_line="scripts/bench.sh"
[ $# -eq 0 ] || command_line+=$(printf ' %q' "$@")
options=()
groups=()
rounds=1
results="$root/bench/RESULTS.md"
while [ $# -gt 0 ]; do
  # --rounds=N and --results=FILE are read as --rounds N and --results FILE.
  case "$1" in
    --rounds=* | --results=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
  esac
  case "$1" in
    --results)
      results="${2:-}"
      shift
      if [ -z "$results" ]; then
        echo "bench.sh: --results needs a file name" >&2
        exit 2
      fi
      ;;
    --rounds)
      rounds="${2:-}"
      shift
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
explicit_groups=yes
if [ ${#groups[@]} -eq 0 ]; then
  explicit_groups=no
  for pairs in "$root"/bench/*.pairs; do
    groups+=("$(basename "$pairs" .pairs)")
  done
  for bench in "$root"/bench/bench_*.c; do
    name=$(basename "$bench" .c)
    [ -e "$root/bench/${name#bench_}.pairs" ] || groups+=("${name#bench_}")
  done
fi
"$root/scripts/install-deps.sh" bench
# The default build (Release, link-time optimisation, the library's flags):
# the benchmarks link libloom.so as users do.
build_options=(-DLOOM_BUILD_TESTS=OFF -DLOOM_BENCH_LIBTORCH=ON)
"$root/scripts/build.sh" "$root/build/release" "${build_options[@]}"
# OpenBLAS tuning variables set on some machines would skew comparisons:
# the benchmarks run without them (tests leave them alone).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
# The python group (bench/python_tiny_op.py) runs in a venv with the `loom`
# package built against this library; it measures its references itself.
venv_python=""
for group in "${groups[@]}"; do
  if [ "$group" = python ]; then
    venv_python=$(sh "$root/scripts/python-venv.sh" "$root" \
      "$root/build/release") || venv_python=""
  fi
done

out=$(mktemp)
medians=$(mktemp)
# For bench/RESULTS.md: each group's raw lines (Loom's, the references'),
# the commands run, and notes.
record=$(mktemp -d)
results_tmp=""
trap 'rm -rf "$out" "$medians" "$record" "$results_tmp"' EXIT
libtorch=""
if compgen -G "$root/build/release/bench/*_reference_libtorch" >/dev/null; then
  version=$(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo '?')
  libtorch=", libtorch ${version%%[+-]*}"
fi
references="pytorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'),\
 numpy $(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')$libtorch"

# Notes a command run for GROUP's SIDE (loom or reference), once, as
# bench/RESULTS.md shows it: relative to the repository.
note_command() {
  local group=$1 side=$2
  shift 2
  local line
  line=$(printf ' %q' "$@")
  line=${line# }
  line=${line//"$root"\//}
  grep -qxF -- "$line" "$record/$group.$side.commands" 2>/dev/null ||
    echo "$line" >> "$record/$group.$side.commands"
}

# One round: Loom's benchmarks, then the references.
run_round() {
  echo "# loom"
  for group in "${groups[@]}"; do
    bench="$root/build/release/bench/bench_$group"
    if [ -x "$bench" ]; then
      note_command "$group" loom "$bench" "${options[@]}"
      "$bench" "${options[@]}" | tee -a "$out" "$record/$group.loom"
    elif [ "$group" = python ] && [ -n "$venv_python" ]; then
      # Its own ratio lines are left out: the .pairs give them below.
      note_command "$group" loom "$venv_python" \
        "$root/bench/python_tiny_op.py" "${options[@]}"
      "$venv_python" "$root/bench/python_tiny_op.py" "${options[@]}" |
        grep -v '^ratio_' | tee -a "$out" "$record/$group.loom"
    fi
  done
  echo "# references: $references"
  for group in "${groups[@]}"; do
    reference="$root/bench/${group}_reference.py"
    if [ -e "$reference" ]; then
      note_command "$group" reference /usr/bin/python3 "$reference" \
        "${options[@]}"
      /usr/bin/python3 "$reference" "${options[@]}" |
        tee -a "$out" "$record/$group.reference"
    fi
    reference="$root/build/release/bench/${group}_reference_libtorch"
    if [ -x "$reference" ]; then
      note_command "$group" reference "$reference" "${options[@]}"
      "$reference" "${options[@]}" | tee -a "$out" "$record/$group.reference" ||
        echo "# $reference failed: its figures are left out" |
          tee -a "$record/$group.notes"
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

# Reads .pairs lines; prints a ratio line for each pair whose figures were
# both measured.
ratios() {
  awk -v figures="$medians" '
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
}

echo "# ratios (above 1: Loom is faster)"
for group in "${groups[@]}"; do
  pairs="$root/bench/$group.pairs"
  if [ -e "$pairs" ]; then ratios < "$pairs" | tee "$record/$group.ratios"; fi
done

# bench/RESULTS.md: the figures above as Markdown, with what they were
# measured on.

# "figure median unit" rows of the medians, for the figures of raw file $1
# (in the order first printed).
figure_rows() {
  [ -s "$1" ] || return 0
  awk -v figures="$medians" '
    BEGIN {
      while ((getline line < figures) > 0) {
        split(line, f, " ")
        value[f[1]] = f[2]; unit[f[1]] = f[3]
      }
    }
    $1 in value && !seen[$1]++ {
      printf "| `%s` | %s | %s |\n", $1, value[$1], unit[$1]
    }' "$1"
}

# Prints the version of Debian package $1, or "not installed".
package_version() {
  dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"
}

write_results() {
  local cpu logical memory simd os kernel compiler commit subject dirty
  cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  logical=$(grep -c '^processor' /proc/cpuinfo)
  memory=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
  simd="SSE2"
  if grep -qw avx2 /proc/cpuinfo; then simd="AVX2"; fi
  if grep -qw avx512f /proc/cpuinfo; then simd="AVX-512"; fi
  os=$(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' \
    /etc/os-release 2>/dev/null || true)
  os=${os:-$(uname -s)}
  kernel=$(uname -r)
  compiler=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' \
    "$root/build/release/CMakeCache.txt")
  compiler=$("${compiler:-cc}" --version 2>/dev/null | head -n 1)
  commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
  subject=$(git -C "$root" log -1 --format=%s 2>/dev/null || true)
  dirty=""
  if [ -n "$(git -C "$root" status --porcelain --untracked-files=no -- . \
      ':(exclude)bench/RESULTS.md' 2>/dev/null)" ]; then
    dirty=" (with uncommitted changes)"
  fi
  local all=yes quick=no option group
  for option in "${options[@]}"; do
    [ "$option" = --quick ] && quick=yes
  done
  [ "$explicit_groups" = yes ] && all=no

  echo "# Benchmark results"
  echo
  echo "Generated by \`scripts/bench.sh\` at the end of each run; do not edit."
  echo "[docs/benchmarks.md](../docs/benchmarks.md) says what each figure"
  echo "measures and how to run the benchmarks."
  echo
  if [ "$quick" = yes ]; then
    echo "**A quick run (\`--quick\`): small sizes and few repetitions, to"
    echo "check that the benchmarks work. These figures are not Loom's"
    echo "measurements; compare only figures from a full run.**"
    echo
  fi
  if [ "$all" = no ]; then
    echo "**A partial run: only the groups listed below.**"
    echo
  fi
  echo "## Run"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| date | $(date -u '+%Y-%m-%d %H:%M UTC') |"
  echo "| commit | \`$commit\`$dirty |"
  echo "| subject | $subject |"
  echo "| command | \`$command_line\` |"
  echo "| build | \`scripts/build.sh build/release ${build_options[*]}\` |"
  echo "| groups | ${groups[*]} |"
  echo "| rounds | $rounds (each figure: the median of its repetitions; over several rounds, the median of the rounds' figures) |"
  echo "| references | $references |"
  echo
  echo "## Machine"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| CPU | $cpu |"
  echo "| cores | $logical logical CPUs, $(nproc) available to the run; widest SIMD: $simd |"
  echo "| memory | $memory |"
  echo "| system | $os, Linux $kernel |"
  echo "| compiler | $compiler |"
  echo "| OpenBLAS | libopenblas-dev $(package_version libopenblas-dev) |"
  echo "| SLEEF | libsleef-dev $(package_version libsleef-dev) |"
  local knobs
  knobs=$(env | grep -E '^(LOOM_[A-Z_]+|OMP_NUM_THREADS|OPENBLAS_NUM_THREADS)=' |
    sort | tr '\n' ' ' || true)
  echo "| environment | ${knobs:-no LOOM_*, OMP_NUM_THREADS or OPENBLAS_NUM_THREADS set} |"
  for group in "${groups[@]}"; do
    echo
    echo "## $group"
    local side title
    for side in loom reference; do
      [ -s "$record/$group.$side" ] || continue
      if [ "$side" = loom ]; then title="Loom"; else title="References"; fi
      echo
      echo "$title:"
      echo
      sed 's/.*/    &/' "$record/$group.$side.commands"
      echo
      echo "| figure | median | unit |"
      echo "|---|---:|---|"
      figure_rows "$record/$group.$side"
    done
    if [ -s "$record/$group.ratios" ]; then
      echo
      echo "Ratios (\`bench/$group.pairs\`; above 1: Loom is faster):"
      echo
      echo "| ratio | value |"
      echo "|---|---:|"
      awk '{ printf "| `%s` | %s %s |\n", $1, $2, $3 }' "$record/$group.ratios"
    fi
    if [ -s "$record/$group.notes" ]; then
      echo
      sed 's/^# //; s/.*/- &/' "$record/$group.notes"
    fi
  done
}

mkdir -p "$(dirname "$results")"
results_tmp=$(mktemp "$results.XXXXXX")
write_results > "$results_tmp"
chmod 644 "$results_tmp"
mv "$results_tmp" "$results"
results_tmp=""
echo "bench.sh: figures written to $results" >&2
