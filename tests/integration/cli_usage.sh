#!/usr/bin/env bash
# cli_usage.sh DEEPUM DEEPUM_SIM LIB: the command line's contract. Every subcommand answers --help
# (exit 0); unknown options and commands exit 2 naming what was wrong; a missing or wrong library
# exits 2 instead of running the program without deepum; `deepum run` preloads the library, passes
# the program's arguments (its own options included) and exit status through; deepum-sim has
# --version and answers a bad argument in one line. Needs no GPU.
set -uo pipefail
deepum=$1 sim=$2 lib=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect STATUS PATTERN COMMAND...: the command exits STATUS and its output (stdout and stderr)
# matches the extended regular expression PATTERN.
expect() {
  local status=$1 pattern=$2
  shift 2
  local output rc
  output=$("$@" 2>&1)
  rc=$?
  if [[ $rc -ne $status ]] || ! grep -Eq -- "$pattern" <<<"$output"; then
    echo "FAIL: $* exited $rc (expected $status), output:"
    sed 's/^/  | /' <<<"$output" | head -20
    echo "  expected to match: $pattern"
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

unset DEEPUM_LIBRARY DEEPUM_CONFIG
export DEEPUM_LIBRARY=$lib

# --help everywhere, and `run --help` is help, not a program named --help.
expect 0 'Subcommands:' "$deepum" --help
expect 0 'deepum run \[--config FILE\] \[--\] COMMAND' "$deepum" run --help
expect 0 '--config FILE' "$deepum" config --help
expect 0 'residency' "$deepum" trace --help
for verb in check summary convert residency; do
  expect 0 "Usage: deepum trace $verb" "$deepum" trace "$verb" --help
done
expect 0 'Usage: deepum report' "$deepum" report --help
expect 0 '^deepum [0-9]+\.[0-9]+\.[0-9]+$' "$deepum" --version
expect 2 'Usage: deepum' "$deepum"

# Unknown options and commands are errors that name them.
expect 2 'unknown option --bogus' "$deepum" run --bogus -- true
expect 2 'unknown option --bogus' "$deepum" run --bogus true
expect 2 'not expected: --bogus' "$deepum" --bogus
expect 2 'not expected: nosuch' "$deepum" nosuch
expect 2 'not expected: --json2' "$deepum" config --json2
expect 2 'no command given' "$deepum" run
expect 2 'no command given' "$deepum" run --
expect 2 '--timeline: Value 0 not in range' "$deepum" trace residency x.dtrace 1GiB --timeline 0
expect 2 'PREFIX is required' "$deepum" trace check
expect 2 'RUN is required' "$deepum" report
expect 2 'no such directory, trace or statistics file' "$deepum" report /nonexistent/run

# The library: a wrong DEEPUM_LIBRARY, or none found next to the program, stops the run.
expect 2 'DEEPUM_LIBRARY=/nonexistent/libdeepum.so: no such file' \
  env DEEPUM_LIBRARY=/nonexistent/libdeepum.so "$deepum" run -- true
echo 'not a library' >"$work/fake.so"
expect 2 'not a shared library' env DEEPUM_LIBRARY="$work/fake.so" "$deepum" run -- true
cp "$deepum" "$work/deepum"
expect 2 'libdeepum.so not found' env DEEPUM_LIBRARY= "$work/deepum" run -- true
(cd "$work" && ln -s "$lib" rel.so)
expect 0 "^$work/rel.so\$" env -C "$work" DEEPUM_LIBRARY=rel.so "$deepum" run -- sh -c 'cd / && echo "$LD_PRELOAD"'
expect 2 'libdeepum.so not found in .*; set DEEPUM_LIBRARY' env -u DEEPUM_LIBRARY "$work/deepum" run -- true

# The program: preloaded, its arguments and exit status passed through, with or without "--".
expect 0 "^$lib\$" "$deepum" run -- sh -c 'echo "$LD_PRELOAD"'
expect 7 '^x --y$' "$deepum" run sh -c 'echo "$0 $1"; exit 7' x --y
expect 7 '^x --y$' "$deepum" run -- sh -c 'echo "$0 $1"; exit 7' x --y
expect 0 '^-- --z$' "$deepum" run sh -c 'echo "$0 $1"' -- --z
expect 127 'cannot run /nonexistent/program' "$deepum" run -- /nonexistent/program
echo '{}' >"$work/settings.json"
expect 0 "^$work/settings.json\$" "$deepum" run --config "$work/settings.json" -- sh -c 'echo "$DEEPUM_CONFIG"'
expect 2 'cannot read' "$deepum" run --config "$work/missing.json" -- true

# deepum-sim: --version, and one line (not the whole usage) for a bad argument.
expect 0 '^deepum-sim [0-9]+\.[0-9]+\.[0-9]+$' "$sim" --version
expect 0 'deepum-sim replay TRACE' "$sim" replay --help
expect 2 "^deepum-sim: unexpected argument '--bogus' \(deepum-sim --help for usage\)$" "$sim" replay --bogus
expect 2 "^deepum-sim: unknown command 'nosuch' \(deepum-sim --help for usage\)$" "$sim" nosuch
expect 2 '^deepum-sim: --timeline writes one replay: give it one --policy' "$sim" replay trace.dtrace --timeline t.json
expect 2 '^deepum-sim: plan needs a trace file' "$sim" plan
expect 2 '^deepum-sim: --memory 3 apples: ' "$sim" plan trace.dtrace --memory '3 apples'
expect 2 '^deepum-sim: --within expects a factor of 1 or more, got 0.5' "$sim" plan trace.dtrace --within 0.5
# --victims: one line per policy, the engine's with victims by the trace's true next use among them.
expect 0 'kernels \([0-9]+ per iteration\)' "$sim" generate --model tiny --batch 2 --seq 128 --iterations 3 --out "$work/tiny.dtrace"
expect 0 '^deepum-swap-oracle victims: [0-9.]+ GiB written to the host; named again within 64 operations [0-9.]+ GiB' \
  "$sim" replay "$work/tiny.dtrace" --oversubscription 1.5 --policy deepum-swap-oracle,oracle --victims

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo PASS
