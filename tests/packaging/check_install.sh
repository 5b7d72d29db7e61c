#!/usr/bin/env bash
# check_install.sh BUILD_DIR: `cmake --install` into a fresh prefix gives bin/deepum, bin/deepum-sim
# and lib/libdeepum.so; the installed deepum finds the installed library by itself; and a project
# finds all three with find_package(deepum) (tests/packaging/consumer).
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/deepum bin/deepum-sim lib/libdeepum.so lib/cmake/deepum/deepumConfig.cmake; do
  [[ -f $prefix/$f ]] || { echo "FAIL: $f not installed"; exit 1; }
done
preload=$(env -u DEEPUM_LIBRARY "$prefix/bin/deepum" run -- sh -c 'echo "$LD_PRELOAD"')
[[ $preload == "$prefix/lib/libdeepum.so" ]] || { echo "FAIL: the installed deepum preloads '$preload'"; exit 1; }
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
paths=$(cat "$work/consumer/deepum_paths.txt")
expected="preload $prefix/lib/libdeepum.so
cli $prefix/bin/deepum
sim $prefix/bin/deepum-sim"
[[ $paths == "$expected" ]] || { echo "FAIL: find_package(deepum) gave:"; echo "$paths"; exit 1; }
echo "PASS: installed into a prefix, found by the installed deepum and by find_package(deepum)"
