#!/usr/bin/env bash
# build_differential.sh OUT_DIR [REF]: builds differential.cpp against the model at REF (default 1fd2ec5; copied into
# namespace deepum::core::reference) and the checkout's model. Run OUT_DIR/differential [PROGRAMS].
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=$1
ref=${2:-1fd2ec5}
mkdir -p "$out"
git -C "$root" show "$ref":core/include/deepum/core/launch_ordered_residency.hpp |
  sed 's/^namespace deepum::core {/namespace deepum::core::reference {/' >"$out/ref_model.hpp"
git -C "$root" show "$ref":core/src/launch_ordered_residency.cpp |
  sed 's|"deepum/core/launch_ordered_residency.hpp"|"ref_model.hpp"|; s/^namespace deepum::core {/namespace deepum::core::reference {/' \
    >"$out/ref_model.cpp"
g++ -std=c++20 -O2 -I"$root/core/include" -I"$out" "$here/differential.cpp" "$out/ref_model.cpp" \
  "$root/core/src/launch_ordered_residency.cpp" "$root/core/src/loop_period.cpp" -o "$out/differential"
