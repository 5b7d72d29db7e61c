#!/usr/bin/env bash
# trace_pytorch.sh LIB DEEPUM_CLI SCRIPT ARGS...: trains under libdeepum.so with trace_file set, then
# checks both trace files: the compact trace reads back whole, the Perfetto JSON has its tracks.
set -euo pipefail
lib=$1 cli=$2
shift 2
source "$(dirname "$0")/gpu_available.sh"
prefix=$(mktemp -d)/trace
DEEPUM_TRACE_FILE="$prefix" "$(dirname "$0")/run_pytorch.sh" "$lib" "$@"
"$cli" trace check "$prefix"
