#!/usr/bin/env bash
# two_devices_losses.sh LIB SCRIPT ARGS...: trains SCRIPT, one process driving two GPUs
# (examples/pytorch/train_two_gpus.py), natively, then with libdeepum.so preloaded at half the
# larger device's native footprint, and requires the same per-step losses, bit for bit, and an
# engine of its own on each device that evicted and whose count of resident bytes stayed under
# that device's limit. Skips (77) with fewer than two GPUs or without PyTorch.
set -euo pipefail
lib=$1
shift
source "$(dirname "$0")/two_gpus_available.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$@" --json "$work/native.json" >"$work/native.log" 2>&1 || { cat "$work/native.log"; exit 1; }
footprint=$(awk '/^footprint_bytes/ {print $2}' "$work/native.log")
[[ -n $footprint ]] || { cat "$work/native.log"; echo "FAIL: no footprint_bytes natively"; exit 1; }
echo "larger native footprint halved: resident limit $((footprint / 2)) bytes on each device"
DEEPUM_STATS_FILE="$work/stats.json" DEEPUM_RESIDENT_LIMIT=$((footprint / 2))B LD_PRELOAD="$lib" \
  "$python" "$@" --json "$work/deepum.json" >"$work/deepum.log" 2>&1 ||
  { cat "$work/deepum.log"; echo "FAIL: under deepum"; exit 1; }
echo "native:"; grep '^step\|peak_reserved' "$work/native.log"
echo "deepum:"; grep '^step\|deepum.*device' "$work/deepum.log" || true
"$python" - "$work" <<'PY'
import json, sys
work = sys.argv[1]
native, deepum = (json.load(open(f"{work}/{name}.json")) for name in ("native", "deepum"))
if native["losses"] != deepum["losses"]:
    sys.exit(f"FAIL: losses differ\n native {native['losses']}\n deepum {deepum['losses']}")
stats = json.load(open(f"{work}/stats.json"))
engines = {e["device"]: e for e in stats.get("engines_by_device", [])}
if sorted(engines) != [0, 1]:
    sys.exit(f"FAIL: engines for devices {sorted(engines)}, expected one for each of 0 and 1")
for device, engine in sorted(engines.items()):
    moves, limit = engine["moves"], engine["resident_limit_bytes"]
    if not moves["evictions"]:
        sys.exit(f"FAIL: device {device}'s engine never evicted: the limit did not apply there")
    if moves["peak_named_bytes"] > limit:
        sys.exit(f"FAIL: device {device}'s engine counted {moves['peak_named_bytes']} bytes resident, limit {limit}")
    print(f"device {device}: {moves['evictions']} evictions, at most {moves['peak_named_bytes']} of {limit} bytes "
          f"resident; swapped out {moves['swapped_out_bytes']} bytes; named by the other device "
          f"{moves.get('other_device_uses', 0)} times ({moves.get('other_device_bytes', 0)} bytes)")
print(f"losses identical over {len(native['losses'])} steps")
PY
