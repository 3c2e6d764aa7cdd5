#!/usr/bin/env bash
# Applies 5,000 nodes and 150,000 pods to a fresh musterd through POST /api/v1/manifests
# (YAML, in manifests of 5,000 documents) with the cycle timer off, and reports the time and
# the store's size. Usage: bench/apply.sh [BUILD_DIR] [NODES] [PODS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
nodes=${2:-5000}
pods=${3:-150000}
tmp=$(mktemp -d /tmp/muster-bench-apply-XXXXXX)
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

python3 - "$tmp" "$nodes" "$pods" <<'PY'
import sys
tmp, nodes, pods = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per = 5000
def node(i):
    return (f"apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i:05d}\n  labels:\n"
            f"    network.topology.nvidia.com/block: block-{i // 32}\n"
            f"status:\n  allocatable: {{cpu: \"32\", memory: 256Gi, pods: \"110\"}}\n")
def pod(i):
    return (f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-{i:06d}\n  namespace: bench\n"
            f"  labels: {{app: bench}}\nspec:\n  containers:\n  - name: main\n    image: bench\n"
            f"    resources:\n      requests: {{cpu: 100m, memory: 500Mi}}\n")
docs = [node(i) for i in range(nodes)] + [pod(i) for i in range(pods)]
for k in range(0, len(docs), per):
    with open(f"{tmp}/m{k // per:04d}.yaml", "w") as f:
        f.write("---\n".join(docs[k:k + per]))
PY
printf 'cycle_interval: 0\nsync: full\nlog_level: warn\n' > "$tmp/config.yml"
"$build/bin/musterd" --config "$tmp/config.yml" --data-dir "$tmp/data" \
  --listen 127.0.0.1:0 --port-file "$tmp/port" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$tmp/port")"
bytes=$(cat "$tmp"/m*.yaml | wc -c)
start=$(date +%s.%N)
for f in "$tmp"/m*.yaml; do
  curl -sS --fail-with-body -o "$tmp/out" -H 'Content-Type: application/yaml' --data-binary "@$f" \
    "$url/api/v1/manifests" || { head -c 600 "$tmp/out"; echo; exit 1; }
done
end=$(date +%s.%N)
kill -TERM $pid; wait $pid || true
secs=$(echo "$end - $start" | bc)
echo "applied         $nodes nodes + $pods pods ($((bytes / 1048576)) MiB of YAML) in ${secs}s"
echo "rate            $(echo "($nodes + $pods) / $secs" | bc) objects/s (parse, validate, store, audit; sync full)"
echo "store           $(du -sm "$tmp/data" | cut -f1) MiB on disk ($(du -sm "$tmp/data/data.mdb" | cut -f1) MiB data.mdb)"
