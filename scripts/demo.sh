#!/usr/bin/env bash
# Starts musterd on the bundled demo cluster (examples/demo) and keeps it in the foreground.
# Usage: scripts/demo.sh [BUILD_DIR]. Environment: MUSTER_DEMO_LISTEN (default 127.0.0.1:8080),
# MUSTER_DEMO_KEEP=1 keeps the previous demo store instead of starting fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
listen=${MUSTER_DEMO_LISTEN:-127.0.0.1:8080}
data=var/demo
url="http://$listen"

[ "${MUSTER_DEMO_KEEP:-0}" = 1 ] || rm -rf "$data"
mkdir -p "$data"

"$build/bin/musterd" --config examples/demo/musterd.yaml --data-dir "$data" --listen "$listen" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null' INT TERM EXIT

for _ in $(seq 100); do
  curl -fsS "$url/healthz" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { echo "musterd failed to start" >&2; exit 1; }
  sleep 0.1
done

muster() { "$build/bin/muster" --server "$url" "$@"; }
muster apply -f examples/demo/cluster.yaml >/dev/null
muster apply -f examples/demo/workloads.yaml >/dev/null
sleep 2
muster get jobs -A || true

cat <<MSG

  muster demo is running: open $url
  CLI:   $build/bin/muster --server $url get jobs -A
         $build/bin/muster --server $url why training/giant
  Stop:  Ctrl-C
MSG
wait $pid
