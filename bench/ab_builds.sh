#!/usr/bin/env bash
# ab_builds.sh PATCH [TARGETS...]: the two builds an A/B measurement compares, side by side. The
# working tree builds into /tmp/bn (B), and a copy of it with PATCH taken back out into /tmp/bb (A),
# each with the tests configured and only TARGETS built (default: deepum sweep; `all` for
# everything, as `ctest -L gpu` needs). Where both libraries exist already (the machine is still
# warm), nothing is built again. Logs: /tmp/buildb.log, /tmp/buildn.log; on a failure their tails.
#
#   bench/ab_builds.sh bench/results/DATE-NAME/change.patch all
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
patch_name=$1
patch_file=$(realpath "$1")
shift
targets=${*:-deepum sweep}
[[ $targets == all ]] && targets=""
if [[ -f /tmp/bn/lib/libdeepum.so && -f /tmp/bb/lib/libdeepum.so && -z ${AB_REBUILD:-} ]]; then
  echo "ab_builds: /tmp/bb and /tmp/bn exist; AB_REBUILD=1 builds them again"
  exit 0
fi
rm -rf /tmp/base && cp -a "$root" /tmp/base || exit 1
(cd /tmp/base && patch -s -R -p1 <"$patch_file") || { echo "ab_builds: $patch_name does not come out of the tree"; exit 1; }
flags=(-DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF)
DEEPUM_BUILD_TARGETS=$targets /tmp/base/scripts/build.sh /tmp/bb "${flags[@]}" >/tmp/buildb.log 2>&1 &
base=$!
if ! DEEPUM_BUILD_TARGETS=$targets "$root/scripts/build.sh" /tmp/bn "${flags[@]}" >/tmp/buildn.log 2>&1; then
  tail -30 /tmp/buildn.log
  exit 1
fi
wait $base || { tail -30 /tmp/buildb.log; exit 1; }
