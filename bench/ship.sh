#!/bin/sh
# bench/ship.sh [BUILD] [JOBS] [ROUNDS]: accounting (ship/) against a real PostgreSQL started
# here (initdb + pg_ctl on a unix socket in a temp dir; as root, as the postgres user).
#  1. records/s shipped: a musterd without accounting applies JOBS single-pod jobs (default
#     3000) on 64 nodes and schedules them; then, ROUNDS times (default 3), the same store is
#     started with accounting into a fresh database and timed from start until /healthz says
#     nothing is left to ship (the whole log, migrations and job rows included).
#  2. cycle latency with shipping on against off, alternating on/off ROUNDS times: a fresh
#     musterd gets LAT_NODES nodes (default 64), then 40 applies of LAT_JOBS single-pod jobs
#     (default 25; each apply one request) and the deletion of the previous apply's pods,
#     cycles every 0.05 s; the median of the cycles' durationMs (the audit's "cycle"
#     records) of each run, then the median over the runs of each side.
# Prints one line per run and the medians. Needs python3 and curl.
set -eu
B=${1:-build}
JOBS=${2:-3000}
ROUNDS=${3:-3}
LN=${LAT_NODES:-64}
LJ=${LAT_JOBS:-25}
d=$(mktemp -d)
pids=""
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    as_pg "$PGBIN/pg_ctl" -D "$d/pg" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$d"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] && chown postgres "$d"
as_pg "$PGBIN/initdb" -D "$d/pg" -U postgres -A trust --no-sync -E UTF8 --locale=C >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$d/pg" -l "$d/pg.log" -o "-k $d -h ''" -w start >/dev/null
psql() { "$PGBIN/psql" -q -h "$d" -U postgres "$@"; }
url() { echo "host=$d dbname=$1 user=postgres"; }

start() { # start DATA CONFIG -> sets base, pid
    rm -f "$d/port"
    "$B/bin/musterd" --config "$2" --data-dir "$1" --listen 127.0.0.1:0 --port-file "$d/port" \
        2>>"$d/musterd.log" &
    pid=$!
    pids="$pids $pid"
    i=0
    while [ ! -s "$d/port" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
    base="http://127.0.0.1:$(cat "$d/port")"
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; }

nodes() {
    python3 - "$1" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    print('{"apiVersion":"v1","kind":"Node","metadata":{"name":"n%03d"},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"200","nvidia.com/gpu":"8"}}}' % i)
PY
}
jobs() { # jobs FROM TO
    python3 - "$1" "$2" <<'PY'
import sys
for i in range(int(sys.argv[1]), int(sys.argv[2])):
    print('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j%05d","namespace":"bench"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/gpu":"1"}}}]}}' % i)
PY
}
apply() { curl -sf -o /dev/null -H 'Content-Type: application/x-ndjson' --data-binary @- "$base/api/v1/manifests"; }
apply_delete() { # DELETE each pod named on stdin (one curl, kept-alive connection)
    python3 -c '
import json, sys
for l in sys.stdin:
    m = json.loads(l)["metadata"]
    print("url = \"%s/api/v1/pods/%s/%s\"\n-X DELETE\n-o /dev/null\n-s" % (sys.argv[1], m["namespace"], m["name"]))
' "$base" | curl -s -K - >/dev/null
}
lag() { curl -s "$base/healthz" | python3 -c 'import json,sys; a=json.load(sys.stdin)["accounting"]; print(a["lagRecords"], a["headSeq"])'; }

echo "== records/s shipped ($JOBS jobs)"
printf 'cycle_interval: 0.05\nsync: none\nlog_level: error\n' >"$d/off.yaml"
start "$d/data" "$d/off.yaml"
nodes 64 | apply
k=0
while [ $k -lt "$JOBS" ]; do jobs $k $((k + 500)) | apply; k=$((k + 500)); done
sleep 2
stop
r=1
rates=""
while [ $r -le "$ROUNDS" ]; do
    psql -c "CREATE DATABASE ship$r"
    printf 'cycle_interval: 0\nsync: none\nlog_level: error\naccounting:\n  url: "%s"\n  cluster: bench\n' \
        "$(url ship$r)" >"$d/on.yaml"
    t0=$(date +%s.%N)
    start "$d/data" "$d/on.yaml"
    while :; do
        set -- $(lag)
        [ "$1" = 0 ] && [ "$2" != 0 ] && break
        sleep 0.02
    done
    t1=$(date +%s.%N)
    head=$2
    stop
    rate=$(python3 -c "print(round($head / ($t1 - $t0)))")
    echo "round $r: $head records in $(python3 -c "print(round($t1 - $t0, 3))") s: $rate records/s"
    rates="$rates $rate"
    r=$((r + 1))
done
echo "median: $(python3 -c "import statistics,sys; print(statistics.median([int(x) for x in sys.argv[1:]]))" $rates) records/s"

echo "== cycle latency, shipping on against off (alternating)"
cycles() { # the median durationMs of the run's cycle records
    curl -s "$base/api/v1/audit?kind=cycle" | python3 -c '
import json, statistics, sys
ms = [json.loads(l)["durationMs"] for l in sys.stdin if l.strip()]
ms = [m for m in ms]
print(round(statistics.median(ms), 3), len(ms))'
}
on=""
off=""
r=1
while [ $r -le "$ROUNDS" ]; do
    for side in on off; do
        rm -rf "$d/lat"
        if [ $side = on ]; then
            psql -c "CREATE DATABASE lat$r"
            printf 'cycle_interval: 0.05\nsync: full\nlog_level: error\naccounting:\n  url: "%s"\n  cluster: bench\n' \
                "$(url lat$r)" >"$d/lat.yaml"
        else
            printf 'cycle_interval: 0.05\nsync: full\nlog_level: error\n' >"$d/lat.yaml"
        fi
        start "$d/lat" "$d/lat.yaml"
        nodes "$LN" | apply
        k=0
        while [ $k -lt 40 ]; do
            jobs $((k * LJ)) $((k * LJ + LJ)) | apply
            sleep 0.06
            if [ $k -gt 0 ]; then # the previous apply's pods go, in one request
                python3 - $(((k - 1) * LJ)) $((k * LJ)) <<'PY' | apply_delete
import sys
for i in range(int(sys.argv[1]), int(sys.argv[2])):
    print('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j%05d","namespace":"bench"}}' % i)
PY
            fi
            k=$((k + 1))
        done
        sleep 1
        set -- $(cycles)
        echo "round $r shipping $side: median cycle $1 ms over $2 cycles"
        if [ $side = on ]; then on="$on $1"; else off="$off $1"; fi
        stop
    done
    r=$((r + 1))
done
python3 -c "
import statistics, sys
on = [float(x) for x in '$on'.split()]
off = [float(x) for x in '$off'.split()]
print('median of medians: on %.3f ms, off %.3f ms (on/off %.2f)' % (statistics.median(on), statistics.median(off), statistics.median(on) / statistics.median(off)))"
