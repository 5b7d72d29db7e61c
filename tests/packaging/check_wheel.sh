#!/usr/bin/env bash
# check_wheel.sh [CUDA_PROGRAM]: the pip route as a user takes it. Builds the wheel (the library and
# the two tools only), installs it into a fresh virtual environment, and checks the installed
# commands: deepum --version, deepum-sim --version, python -m deepum --help, deepum.library_path(),
# the wheel holding a library that needs nothing but libc, and, given CUDA_PROGRAM
# (tests/programs/alloc_runtime.cu built with a shared cudart), `deepum run -- CUDA_PROGRAM` seeing
# the same CUDA result and exiting with the same status as the program alone: CUDA's own error
# where there is no GPU (fail-open). Run by .ci/run after scripts/test.sh; needs PyPI for
# scikit-build-core. The build honours scikit-build-core's SKBUILD_* and CMAKE_ARGS variables.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
program=${1:-}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

echo "== wheel: pip wheel $root"
start=$SECONDS
if ! "$python" -m pip wheel "$root" --no-deps -w "$work/dist" >"$work/wheel.log" 2>&1; then
  tail -60 "$work/wheel.log"
  echo "FAIL: the wheel did not build"
  exit 1
fi
wheel=$(ls "$work"/dist/deepum-*.whl)
echo "built $(basename "$wheel") in $((SECONDS - start)) s"

"$python" - "$wheel" <<'EOF' || failures=$((failures + 1))
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
want = ["deepum/__init__.py", "deepum/__main__.py", ".data/scripts/deepum", ".data/scripts/deepum-sim",
        ".data/data/lib/libdeepum.so"]
missing = [w for w in want if not any(n.endswith(w) for n in names)]
if missing:
    print("FAIL: the wheel lacks", missing, "; it holds", names)
    sys.exit(1)
print("the wheel holds the package, both commands and libdeepum.so")
EOF

echo "== a fresh virtual environment"
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index "$wheel"
bin="$work/venv/bin"

expect_output() {  # expect_output PATTERN COMMAND...: exits 0 and prints a line matching PATTERN
  local pattern=$1 output
  shift
  if output=$("$@" 2>&1) && grep -Eq -- "$pattern" <<<"$output"; then
    echo "ok: ${*#"$work/"}"
  else
    fail "$* printed: $(head -5 <<<"$output")"
  fi
}
expect_output '^deepum [0-9]+\.[0-9]+\.[0-9]+$' "$bin/deepum" --version
expect_output '^deepum-sim [0-9]+\.[0-9]+\.[0-9]+$' "$bin/deepum-sim" --version
expect_output 'run a program with libdeepum.so preloaded' "$bin/python" -m deepum --help
expect_output "^$work/venv/lib/libdeepum.so\$" env -u DEEPUM_LIBRARY "$bin/python" -c \
  "import deepum; print(deepum.library_path())"

library="$work/venv/lib/libdeepum.so"
needed=$(readelf -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if grep -Eq 'libstdc\+\+|libgcc_s|libcuda|libcudart|libspdlog|libfmt' <<<"$needed"; then
  fail "libdeepum.so needs $needed"
else
  echo "ok: libdeepum.so needs only $needed"
fi

if [[ -n $program ]]; then
  echo "== the installed deepum runs a CUDA program"
  native=$("$program" --probe-error 2>/dev/null)
  preloaded=$(env -u DEEPUM_LIBRARY "$bin/deepum" run -- "$program" --probe-error 2>"$work/run.err")
  echo "without deepum: $native"
  echo "with deepum:    $preloaded"
  [[ $native == "$preloaded" ]] || fail "deepum changed what the program sees ($(cat "$work/run.err"))"
  # Its exit status passes through: 77 where there is no GPU (CUDA's error), 0 where there is one.
  limit=1073741824
  set +e
  DEEPUM_ALLOC_LIMIT=1GiB "$program" "$limit" >/dev/null 2>&1
  native_status=$?
  DEEPUM_ALLOC_LIMIT=1GiB env -u DEEPUM_LIBRARY "$bin/deepum" run -- "$program" "$limit" >/dev/null 2>&1
  status=$?
  set -e
  echo "exit status without deepum $native_status, with deepum $status"
  [[ $status == "$native_status" ]] || fail "exit status $status under deepum, $native_status without"
else
  echo "no CUDA program given (no nvcc?): the run of one is left out"
fi

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "PASS: the wheel installs and runs"
