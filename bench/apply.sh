#!/usr/bin/env bash
# Applies 5,000 nodes and 150,000 pods to a fresh musterd through POST /api/v1/manifests
# (in manifests of 5,000 documents: YAML, a JSON array or NDJSON) with the cycle timer off
# (a cycle still runs soon after each apply), and reports the time and the store's size.
# Usage: bench/apply.sh [--format yaml|json|ndjson] [--sync full|meta|none] [--perf FILE]
#                       [--no-expect] [--one-list] [BUILD_DIR] [NODES] [PODS]
#   --perf FILE  records musterd with `perf record --call-graph dwarf` into FILE (PERF_FREQ
#                samples a second, 300; PERF_EVENT=page-faults PERF_COUNT=10 records every
#                10th page fault instead; PERF_CG=fp walks frame pointers instead of DWARF)
#   --no-expect  curl sends no "Expect: 100-continue" (a musterd that does not answer it
#                made curl wait 1 s before each body over 1 MiB)
#   --one-list   one request instead: a JSON kind: List of every node and pod (PODS defaults
#                to 50,000: Basic-5k's count), then the cycles that place them; reports the
#                apply's time (curl's, request sent to reply read) against the cycles' time
#                (muster_cycle_duration_seconds_sum once every pod runs) and their ratio;
#                with --format yaml after it, one YAML stream of them instead (as
#                `muster apply -f` sends one file), with --format ndjson one NDJSON body
# Either way it prints the applies' parts as musterd timed them (muster_apply_seconds_total:
# body, parse, validate, lock, write, commit, view, reply) and what curl's times hold beside.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common/placed.sh
format=yaml
sync=full
perf=
one_list=
expect=()
while [ $# -gt 0 ]; do
  case $1 in
    --format) format=$2; shift 2 ;;
    --perf) perf=$2; shift 2 ;;
    --sync) sync=$2; shift 2 ;;
    --no-expect) expect=(-H 'Expect:'); shift ;;
    --one-list) one_list=1; format=json; shift ;;
    *) break ;;
  esac
done
case $format in
  yaml) ctype=application/yaml ;;
  json) ctype=application/json ;;
  ndjson) ctype=application/x-ndjson ;;
  *) echo "unknown format '$format': use yaml, json or ndjson" >&2; exit 2 ;;
esac
build=${1:-build}
nodes=${2:-5000}
pods=${3:-$([ -n "$one_list" ] && echo 50000 || echo 150000)}
tmp=$(mktemp -d /tmp/muster-bench-apply-XXXXXX)
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

python3 - "$tmp" "$nodes" "$pods" "$format" "$one_list" <<'PY'
import json, sys
tmp, nodes, pods, fmt, one = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
per = 5000
def node(i):
    return (f"apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i:05d}\n  labels:\n"
            f"    network.topology.nvidia.com/block: block-{i // 32}\n"
            f"status:\n  allocatable: {{cpu: \"32\", memory: 256Gi, pods: \"110\"}}\n")
def pod(i):
    return (f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-{i:06d}\n  namespace: bench\n"
            f"  labels: {{app: bench}}\nspec:\n  containers:\n  - name: main\n    image: bench\n"
            f"    resources:\n      requests: {{cpu: 100m, memory: 500Mi}}\n")
def node_obj(i):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:05d}",
                         "labels": {"network.topology.nvidia.com/block": f"block-{i // 32}"}},
            "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}}}
def pod_obj(i):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i:06d}", "namespace": "bench", "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "main", "image": "bench", "resources": {
                "requests": {"cpu": "100m", "memory": "500Mi"}}}]}}
if fmt == "yaml":
    docs = [node(i) for i in range(nodes)] + [pod(i) for i in range(pods)]
else:
    docs = [node_obj(i) for i in range(nodes)] + [pod_obj(i) for i in range(pods)]
if one:
    with open(f"{tmp}/m0000.body", "w") as f:
        if fmt == "yaml":
            f.write("---\n".join(docs))
        elif fmt == "ndjson":
            f.write("".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs))
        else:
            json.dump({"apiVersion": "v1", "kind": "List", "items": docs}, f, separators=(",", ":"))
    docs = []
for k in range(0, len(docs), per):
    with open(f"{tmp}/m{k // per:04d}.body", "w") as f:
        if fmt == "yaml":
            f.write("---\n".join(docs[k:k + per]))
        elif fmt == "json":
            json.dump(docs[k:k + per], f, separators=(",", ":"))
        else:
            f.write("".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs[k:k + per]))
PY
printf 'cycle_interval: 0\nsync: %s\nlog_level: warn\n' "$sync" > "$tmp/config.yml"
wrap=()
rate=(-F "${PERF_FREQ:-300}")
[ -n "${PERF_COUNT:-}" ] && rate=(-c "$PERF_COUNT")
[ -n "$perf" ] && wrap=(perf record ${PERF_EVENT:+-e "$PERF_EVENT"} "${rate[@]}" --call-graph ${PERF_CG:-dwarf,16384} -o "$perf" --)
"${wrap[@]}" "$build/bin/musterd" --config "$tmp/config.yml" --data-dir "$tmp/data" \
  --listen 127.0.0.1:0 --port-file "$tmp/port" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$tmp/port")"
bytes=$(cat "$tmp"/m*.body | wc -c)
start=$(date +%s.%N)
for f in "$tmp"/m*.body; do
  curl -sS --fail-with-body -o "$tmp/out" -w '%{time_total}\n' "${expect[@]}" \
    -H "Content-Type: $ctype" --data-binary "@$f" "$url/api/v1/manifests" >> "$tmp/times" ||
    { head -c 600 "$tmp/out"; echo; exit 1; }
done
end=$(date +%s.%N)
if [ -n "$one_list" ]; then
  # the cycles that place what was applied: until every pod's job is placed (Scheduled or
  # Running; at most 120 s)
  metric() { curl -sS "$url/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
  wait_placed "$url" "$pods" || true
  cycles=$(metric muster_cycle_duration_seconds_sum)
  ncycles=$(metric muster_cycle_duration_seconds_count)
  running=$(placed "$url")
  apply=$(cat "$tmp/times")
fi
# the applies' parts as musterd timed them (muster_apply_seconds_total, summed), and what
# curl's times hold beside them (the front end's relay, the loopback, curl)
parts=$(curl -sS "$url/metrics" | awk '$1 ~ /^muster_apply_seconds_total/ {
  p = $1; sub(/.*phase="/, "", p); sub(/".*/, "", p); printf "%s %.3f, ", p, $2; n += $2 }
  END { printf "together %.3f", n }')
inside=${parts##*together }
curled=$(paste -sd+ "$tmp/times" | bc)
# musterd's CPU time (user + system, all threads) over its life: steadier than the wall time
# on a shared machine. Not with --perf (then $pid is perf's).
cpu=
cycle_cpu=
faults=
if [ -z "$perf" ]; then
  read -r -a st < <(sed 's/.*) //' "/proc/$pid/stat")
  cpu=$(echo "scale=2; (${st[11]} + ${st[12]}) / $(getconf CLK_TCK)" | bc)
  faults=${st[7]} # minor page faults: memory touched for the first time
  for t in /proc/$pid/task/*; do # the cycle thread's share (server/daemon.c names it)
    [ "$(cat "$t/comm")" = musterd-cycle ] || continue
    read -r -a st < <(sed 's/.*) //' "$t/stat")
    cycle_cpu=$(echo "scale=2; (${st[11]} + ${st[12]}) / $(getconf CLK_TCK)" | bc)
  done
fi
kill -INT $pid; wait $pid || true
secs=$(echo "$end - $start" | bc)
if [ -n "$one_list" ]; then
  what=$(case $format in yaml) echo "YAML stream" ;; ndjson) echo "NDJSON body" ;; *) echo "JSON List" ;; esac)
  echo "applied         one $what of $nodes nodes + $pods pods ($((bytes / 1048576)) MiB) in ${apply}s (curl: request sent to reply read)"
  echo "cycles          ${cycles}s in $ncycles cycles until $running of $pods pods' jobs were placed (muster_cycle_duration_seconds_sum)"
  echo "ratio           $(echo "scale=2; $apply / $cycles" | bc)x (apply / cycles)"
  echo "parts           $parts s; outside them $(echo "$curled - $inside" | bc)s (muster_apply_seconds_total)"
  [ -n "$cpu" ] && echo "musterd cpu     ${cpu}s (user + system, every thread), of it the cycle thread ${cycle_cpu}s; $faults minor page faults"
  exit 0
fi
echo "applied         $nodes nodes + $pods pods ($((bytes / 1048576)) MiB of $format) in ${secs}s"
echo "rate            $(echo "($nodes + $pods) / $secs" | bc) objects/s (parse, validate, store, audit; sync $sync)"
[ -n "$cpu" ] && echo "musterd cpu     ${cpu}s (user + system, every thread)"
echo "parts           $parts s; outside them $(echo "$curled - $inside" | bc)s (muster_apply_seconds_total)"
echo "store           $(du -sm "$tmp/data" | cut -f1) MiB on disk ($(du -sm "$tmp/data/data.mdb" | cut -f1) MiB data.mdb)"
