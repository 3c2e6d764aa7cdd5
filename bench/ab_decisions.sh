#!/usr/bin/env bash
# ab_decisions.sh WRITER_BUILD REPLAYER_BUILD [WORKLOAD...]: whether two builds decide alike.
# Each workload is run by WRITER_BUILD's bench with its store kept; then REPLAYER_BUILD's
# musterd opens that store and GET /api/v1/audit/replay?from=1 runs every cycle again with
# REPLAYER_BUILD's scheduler, comparing each cycle's decisions (placed, preempted, nominated,
# evicted, ...: docs/api.md) with those WRITER_BUILD logged. Prints one line a workload and
# exits 1 when any cycle decided otherwise. A change meant to leave every decision as it was
# (a cache, a faster search) runs it both ways against the commit before it:
#   bench/ab_decisions.sh build-rel /work/wt-prev/build-rel
#   bench/ab_decisions.sh /work/wt-prev/build-rel build-rel gang-topology slurm-gangs
# WORKLOAD: a bench_sched workload, with its options in one word ("gang --cluster 300"), or
# preempt / reclaim (bench_preempt, whose --keep the writer must have: from 2026-11-29 on).
# Default: gang-topology, "gang --cluster 300", slurm-gangs, slurm-mixed, preempt, reclaim.
set -eu
writer=${1:?writer build dir}; replayer=${2:?replayer build dir}; shift 2
[ $# -gt 0 ] || set -- gang-topology "gang --cluster 300" slurm-gangs slurm-mixed preempt reclaim
tmp=$(mktemp -d /tmp/muster-ab-decisions-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
printf 'cycle_interval: 0\nlog_level: warn\n' > "$tmp/config.yml"
bad=0
k=0
for w in "$@"; do
    k=$((k + 1))
    dir="$tmp/w$k"
    read -r -a args <<<"$w"
    case ${args[0]} in
        preempt) "$writer/bin/bench_preempt" "${args[@]:1}" --keep "$dir" > /dev/null ;;
        reclaim) "$writer/bin/bench_preempt" --reclaim "${args[@]:1}" --keep "$dir" > /dev/null ;;
        *) "$writer/bin/bench_sched" "${args[@]}" --sync none --keep "$dir" > /dev/null ;;
    esac
    rm -f "$tmp/port"
    "$replayer/bin/musterd" --config "$tmp/config.yml" --data-dir "$dir" --listen 127.0.0.1:0 \
        --port-file "$tmp/port" 2> "$tmp/log" &
    pid=$!
    for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
    [ -s "$tmp/port" ] || { echo "$w: musterd did not start:" >&2; cat "$tmp/log" >&2; exit 2; }
    curl -sS --max-time 1800 -o "$tmp/replay.json" \
        "http://127.0.0.1:$(cat "$tmp/port")/api/v1/audit/replay?from=1" || true
    kill "$pid"; wait "$pid" 2>/dev/null || true
    pid=
    rm -rf "$dir"
    line=$(python3 -c '
import json, sys
t = open(sys.argv[1]).read()
r = json.loads(t) if t.startswith("{") else {}
if "ok" not in r:
    print("no answer: " + t[:300]); sys.exit(1)
print("%s: %d cycles, %d decisions, %d differences%s" % (
    "ok" if r["ok"] else "DIFFERENT", r["cycles"], r["decisions"], r["differences"],
    "" if r["ok"] else "; first: " + json.dumps(r["cyclesDiffering"][0])[:600]))
sys.exit(0 if r["ok"] else 1)' "$tmp/replay.json") || bad=1
    printf '%-24s %s\n' "$w" "$line"
done
exit $bad
