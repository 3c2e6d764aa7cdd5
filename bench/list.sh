#!/usr/bin/env bash
# Times big list reads: a fresh musterd is given one JSON List of NODES nodes and PODS pods
# (bench/apply.sh --one-list's objects), schedules them, and then every path below is read
# ROUNDS times with curl (identity encoding); prints each path's median and range of curl's
# time_total and the answer's size. Then the reads the scheduler answers from its view
# (jobs, nodes with their usage, the node map, the topology tree), each made fresh (a node
# applied before each round, so the read cache holds no answer), with /metrics polled beside
# it: /metrics takes the scheduler's lock, so its slowest answer during the read says how
# long the read held the scheduler (and its cycles) back (the round of the median read;
# its slowest without the read beside it).
# Usage: bench/list.sh [BUILD_DIR] [ROUNDS] [NODES] [PODS]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common/placed.sh
build=${1:-build}
rounds=${2:-5}
nodes=${3:-5000}
pods=${4:-50000}
paths=(/api/v1/pods /api/v1/nodes "/api/v1/pods?limit=500" "/api/v1/jobs?limit=500")
fresh=(/api/v1/jobs /api/v1/nodes /api/v1/nodemap /api/v1/topology)
tmp=$(mktemp -d /tmp/muster-bench-list-XXXXXX)
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

python3 - "$tmp/body.json" "$nodes" "$pods" <<'PY'
import json, sys
out, nodes, pods = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
docs = [{"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": f"node-{i:05d}",
                      "labels": {"network.topology.nvidia.com/block": f"block-{i // 32}"}},
         "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}}}
        for i in range(nodes)]
docs += [{"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": f"pod-{i:06d}", "namespace": "bench", "labels": {"app": "bench"}},
          "spec": {"containers": [{"name": "main", "image": "bench", "resources": {
              "requests": {"cpu": "100m", "memory": "500Mi"}}}]}} for i in range(pods)]
with open(out, "w") as f:
    json.dump({"apiVersion": "v1", "kind": "List", "items": docs}, f, separators=(",", ":"))
PY

printf 'cycle_interval: 1\n' >"$tmp/config.yml"
"$build/bin/musterd" --config "$tmp/config.yml" --data-dir "$tmp/data" \
  --listen 127.0.0.1:0 --port-file "$tmp/port" >"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$tmp/port")"
curl -sS --fail-with-body -o /dev/null -H 'Content-Type: application/json' \
  --data-binary @"$tmp/body.json" "$url/api/v1/manifests"
# every pod's job placed (the list shows them bound), then nothing else runs
wait_placed "$url" "$pods" || { echo "not every pod was placed within 120 s" >&2; exit 1; }
for p in "${paths[@]}"; do
  for _ in $(seq "$rounds"); do
    curl -sS --fail-with-body -o /dev/null -w '%{time_total} %{size_download}\n' "$url$p"
  done | sort -n | awk -v p="$p" '{ t[NR] = $1; s = $2 }
    END { printf "%-28s median %.3f s (%.3f-%.3f), %d rounds, %.1f MB\n", p, t[int((NR + 1) / 2)],
          t[1], t[NR], NR, s / 1e6 }'
done

# slowest of /metrics polled every 10 ms while the file $1 is absent
poll_metrics() {
  local worst=0 t
  while [ ! -e "$1" ]; do
    t=$(curl -sS -o /dev/null -w '%{time_total}' "$url/metrics")
    worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a ? b : a) }')
    sleep 0.01
  done
  echo "$worst"
}
for fp in "${fresh[@]}"; do
  for r in $(seq "$rounds"); do
    curl -sS --fail-with-body -o /dev/null -H 'Content-Type: application/json' \
      --data "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"fresh-$r\"}}" \
      "$url/api/v1/manifests"
    sleep 1.5 # the cycle the node wakes has run
    rm -f "$tmp/done"
    (sleep 0.3; touch "$tmp/done") &
    alone=$(poll_metrics "$tmp/done")
    rm -f "$tmp/done"
    (curl -sS --fail-with-body -o /dev/null -w '%{time_total} %{size_download}\n' "$url$fp" >"$tmp/fresh.t"
     touch "$tmp/done") &
    beside=$(poll_metrics "$tmp/done")
    wait
    echo "$(cat "$tmp/fresh.t") $beside $alone"
  done | sort -n | awk -v p="$fp (made fresh)" '{ t[NR] = $1; s = $2; b[NR] = $3; a[NR] = $4 }
    END { m = int((NR + 1) / 2); printf "%-28s median %.3f s (%.3f-%.3f), %d rounds, %.1f MB; slowest /metrics beside it %.3f s (%.3f without it)\n",
          p, t[m], t[1], t[NR], NR, s / 1e6, b[m], a[m] }'
done
