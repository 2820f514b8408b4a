#!/usr/bin/env bash
# Compiles every public header alone, as strict C11 and as C++17 (and C++11),
# each from a translation unit that includes nothing else.
# Usage: check_headers.sh <include-dir> <c-compiler> <c++-compiler>
set -euo pipefail
include_dir=$1
cc=$2
cxx=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
count=0
while IFS= read -r header; do
  rel=${header#"$include_dir"/}
  printf '#include "%s"\ntypedef int header_check_unit;\n' "$rel" > "$work/unit.c"
  cp "$work/unit.c" "$work/unit.cc"
  count=$((count + 1))
  if ! "$cc" -std=c11 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only \
      -I"$include_dir" "$work/unit.c"; then
    echo "FAIL (C11): $rel"
    failures=$((failures + 1))
  fi
  for std in c++11 c++17; do
    if ! "$cxx" -std=$std -pedantic-errors -Wall -Wextra -Werror \
        -fsyntax-only -I"$include_dir" "$work/unit.cc"; then
      echo "FAIL ($std): $rel"
      failures=$((failures + 1))
    fi
  done
done < <(find "$include_dir" -name '*.h' | sort)
echo "$count headers checked, $failures failures"
[ "$count" -gt 0 ] && [ "$failures" -eq 0 ]
