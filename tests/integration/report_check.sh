#!/usr/bin/env bash
# report_check.sh DEEPUM DEEPUM_SIM [--browser]: `deepum report` on a run's folder: a trace that
# deepum-sim generates and a statistics file, then the page's sections and plots. With --browser,
# Debian's chromium renders the page headless: its DOM must hold every plot, and its screenshot the
# plots' colours (bars and lines drawn, not an empty page); skips (77) without chromium. Needs no GPU.
set -euo pipefail
deepum=$1 sim=$2 browser=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/run"
"$sim" generate --model tiny --batch 2 --seq 128 --iterations 3 --out "$work/run/trace.dtrace" >/dev/null
# A statistics file as deepum writes it (docs/stats-format.md), with launch times to draw.
cat >"$work/run/stats.json" <<'JSON'
{"schema_version": 1, "process": "pid 1, python train.py", "config": "defaults", "run_ns": 40000000,
 "resident_limit_bytes": 134217728, "device_total_bytes": 85899345920, "peak_managed_bytes": 343932928,
 "tracing": {"status": "started", "gpu_time": {"executions": 369, "busy_ns": 9000000, "waited_ns": 12000000,
  "fault_ns": 3000000, "faults": 685}},
 "program_thread": {"launch_callback": {"count": 369, "total_ns": 2000000, "p50_ns": 3072, "p99_ns": 40960,
  "max_ns": 50000, "buckets": [[2560, 100], [3072, 200], [40960, 69]]}, "copy_callback": {"total_ns": 0},
  "move_calls_ns": {"total": 1000000}, "host_copy_back_ns": 0},
 "verdict": {"cause": "gpu_waits", "text": "the GPU waited 12.0 ms (30% of the 40.0 ms run) after work was runnable"}}
JSON

"$deepum" report "$work/run"
page=$work/run/deepum-report.html
for section in verdict residency time-split kernel-stalls program-thread counters; do
  grep -q "<section id=\"$section\">" "$page" || { echo "FAIL: the page has no $section section"; exit 1; }
done
grep -q 'the GPU waited 12.0 ms' "$page" || { echo "FAIL: the page lacks the statistics' verdict"; exit 1; }
grep -q 'sim::adam_step' "$page" || { echo "FAIL: the page lacks the trace's kernels"; exit 1; }
if grep -Eq '<script|https?:|src=|href=' "$page"; then
  echo "FAIL: the page refers to something outside itself"
  exit 1
fi
status=0
"$deepum" report "$work/nothing" 2>"$work/err" || status=$?
[[ $status -eq 2 ]] && grep -q 'no such directory' "$work/err" || { echo "FAIL: a missing RUN exited $status"; exit 1; }
echo "PASS: deepum report wrote $(wc -c <"$page") bytes with every section"
[[ $browser == --browser ]] || exit 0

chromium=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chromium ]] || { echo "SKIP: no chromium to render the page"; exit 77; }
headless=("$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile")
timeout 120 "${headless[@]}" --dump-dom "file://$page" >"$work/dom.html" 2>/dev/null
svgs=$(grep -o '<svg' "$work/dom.html" | wc -l)
[[ $svgs -ge 4 ]] || { echo "FAIL: the rendered page holds $svgs plots"; exit 1; }
timeout 120 "${headless[@]}" --window-size=1100,3000 --screenshot="$work/page.png" "file://$page" >/dev/null 2>&1
python3 - "$work/page.png" <<'PY'
# Counts the pixels of each plot colour in the screenshot (PNG decoded with the standard library).
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and colour in (2, 6), f"PNG depth {depth} colour type {colour}"
        channels = 3 if colour == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw, stride = zlib.decompress(idat), width * channels
rows, previous = [], bytearray(stride)
for y in range(height):
    kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - channels] if i >= channels else 0
        b, c = previous[i], previous[i - channels] if i >= channels else 0
        p = a + b - c
        predictor = a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c
        line[i] = (line[i] + (0, a, b, (a + b) // 2, predictor)[kind]) & 0xFF
    rows.append(line)
    previous = line
colours = {"GPU running": (0x1F, 0x77, 0xB4), "waits": (0xFF, 0x7F, 0x0E), "faults": (0xD6, 0x27, 0x28),
           "launch times": (0x8C, 0x56, 0x4B)}
seen = {name: 0 for name in colours}
for line in rows:
    for x in range(0, stride, channels):
        pixel = tuple(line[x:x + 3])
        for name, rgb in colours.items():
            if pixel == rgb:
                seen[name] += 1
missing = [f"{name} ({count} pixels)" for name, count in seen.items() if count < 100]
if missing:
    sys.exit("FAIL: the screenshot lacks the plots' colours: " + ", ".join(missing))
print("PASS: chromium drew every plot: " + ", ".join(f"{n} {c} px" for n, c in seen.items()))
PY
