#!/bin/bash
set -uo pipefail
rm -rf /tmp/src16 && mkdir /tmp/src16 && cp -r $(ls -A | grep -v '^build') /tmp/src16/ 2>/dev/null
sed -i 's/inline constexpr std::size_t kMaxPointerTableBytes = std::size_t{256} << 10;/inline constexpr std::size_t kMaxPointerTableBytes = 16384;/' /tmp/src16/cupti_tracer/include/deepum/cupti_tracer/copy_call.hpp
grep -n "kMaxPointerTableBytes =" /tmp/src16/cupti_tracer/include/deepum/cupti_tracer/copy_call.hpp
(cd /tmp/src16 && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/b16 -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build16.log 2>&1) || { tail -20 /tmp/build16.log; exit 1; }
for v in bz b16 bz b16; do
  timeout 200 python3 tests/zoo/model_zoo.py --lib /tmp/$v/lib/libdeepum.so --sweep /tmp/bz/tests/sweep --out $OUT/ab-$v-$RANDOM --modes "fastest 2x" --only gpt2 2>&1 | grep "fastest 2x" | tail -1 | sed "s/^/$v /"
done
