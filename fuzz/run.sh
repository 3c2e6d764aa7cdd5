#!/bin/sh
# fuzz/run.sh [SECONDS] [HARNESS...] - runs each harness for SECONDS (default 30), one
# after another (the machine is shared), and prints runs and exec/s for each.
#
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_JOBS passes -jobs/-workers.
# The working corpus grows in $FUZZ_BUILD/corpus/<harness>/, seeded from fuzz/seeds/
# and the repository's manifests; crashes land in $FUZZ_BUILD/artifacts/.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_BUILD:-$root/build-fuzz}
secs=${1:-30}
[ $# -gt 0 ] && shift
names=${*:-manifest quantity yaml_dump rfc3339 config router front json_read decode_stored yaml_split}

"$root/fuzz/build.sh" "$out" >/dev/null
mkdir -p "$out/artifacts"
status=0
for name in $names; do
    corpus="$out/corpus/$name"
    mkdir -p "$corpus"
    case $name in
    manifest)
        extra="$root/tests/data/manifests $root/examples"
        opts="-max_len=16384 -dict=$root/fuzz/manifest.dict"
        ;;
    yaml_dump) extra="$root/tests/data/manifests/valid"; opts="-max_len=8192" ;;
    yaml_split)
        extra="$root/tests/data/manifests $root/examples"
        opts="-max_len=8192 -dict=$root/fuzz/manifest.dict"
        ;;
    config) extra=""; opts="-max_len=4096" ;;
    router) extra=""; opts="-max_len=1024" ;;
    front) extra=""; opts="-max_len=4096" ;;
    json_read) extra=""; opts="-max_len=4096 -dict=$root/fuzz/manifest.dict" ;;
    decode_stored) extra=""; opts="-max_len=4096 -dict=$root/fuzz/manifest.dict" ;;
    *) extra=""; opts="-max_len=256" ;;
    esac
    log="$out/fuzz_$name.log"
    # shellcheck disable=SC2086
    if ! "$out/fuzz_$name" "$corpus" "$root/fuzz/seeds/$name" $extra $opts \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -artifact_prefix="$out/artifacts/${name}-" -print_final_stats=1 >"$log" 2>&1; then
        status=1
        echo "fuzz_$name: FAILED (see $log)"
        grep -m1 -A3 "ERROR\|invariant\|runtime error" "$log" || true
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "fuzz_$name: ${secs}s, ${runs:-?} runs, ${rate:-?} exec/s, $cov"
done
exit $status
