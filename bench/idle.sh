#!/bin/sh
# bench/idle.sh [BUILD] [SECONDS] [WAITING]: what an idle musterd writes. Starts musterd from
# BUILD/bin (default build) with sync: full and cycle_interval: 1 on a fresh data directory,
# applies two 4-cpu nodes, a pod running on one and (unless WAITING is 0) a pod that fits no
# node (it waits), lets
# it settle for 5 s, then counts over SECONDS (default 60) the audit records appended (the
# newest audit sequence number before and after) and the fsync/fdatasync calls (strace -f -c).
set -eu
B=${1:-build}
T=${2:-60}
W=${3:-1}
d=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT
printf 'cycle_interval: 1\nsync: full\nlog_level: warn\n' >"$d/cfg.yaml"
"$B/bin/musterd" --config "$d/cfg.yaml" --data-dir "$d/data" --listen 127.0.0.1:0 \
    --port-file "$d/port" &
pid=$!
i=0
while [ ! -s "$d/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
base="http://127.0.0.1:$(cat "$d/port")"
cat >"$d/cluster.yaml" <<'YAML'
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}
---
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "runs", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}}
YAML
[ "$W" = 0 ] || cat >>"$d/cluster.yaml" <<'YAML'
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waits", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "8"}}}]}}
YAML
"$B/bin/muster" --server "$base" apply -f "$d/cluster.yaml" >/dev/null
sleep 5
seq() { curl -s "$base/api/v1/audit?tail=1" | sed -n 's/.*"seq": *\([0-9]*\).*/\1/p'; }
s0=$(seq)
strace -qq -f -c -e trace=fsync,fdatasync -p "$pid" -o "$d/strace" &
st=$!
sleep "$T"
kill -INT $st
wait $st 2>/dev/null || true
s1=$(seq)
f=$(awk '/fsync|fdatasync/ {n += $4} END {print n + 0}' "$d/strace")
echo "idle ${T}s: $((s1 - s0)) audit records, $f fsync/fdatasync calls"
