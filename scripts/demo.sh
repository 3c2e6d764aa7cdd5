#!/usr/bin/env bash
# Starts musterd on the bundled demo cluster (examples/demo) and keeps it in the foreground.
# Usage: scripts/demo.sh [BUILD_DIR]. Environment: MUSTER_DEMO_LISTEN (default 127.0.0.1:8080),
# MUSTER_DEMO_KEEP=1 keeps the previous demo store instead of starting fresh,
# MUSTER_DEMO_DATA (default var/demo) the data directory.
#
# A taken port is found before anything is touched: the previous demo's data directory stays
# as it was. Ctrl-C stops musterd (it finishes its cycle and syncs) and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
listen=${MUSTER_DEMO_LISTEN:-127.0.0.1:8080}
data=${MUSTER_DEMO_DATA:-var/demo}
url="http://$listen"
host=${listen%:*}
port=${listen##*:}
[ "$host" = "0.0.0.0" ] && host=127.0.0.1

# something answers on the port already (an earlier demo, another server): say so and leave
if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
  echo "demo: $listen is taken (is a demo already running?); stop it or set MUSTER_DEMO_LISTEN." >&2
  echo "demo: $data is left as it was." >&2
  exit 1
fi

[ "${MUSTER_DEMO_KEEP:-0}" = 1 ] || rm -rf "$data"
mkdir -p "$data"

"$build/bin/musterd" --config examples/demo/musterd.yaml --data-dir "$data" --listen "$listen" &
pid=$!

stop() {
  trap - INT TERM EXIT
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo
  echo "demo stopped; its store is in $data (MUSTER_DEMO_KEEP=1 starts from it again)"
  exit 0
}
trap stop INT TERM
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT

for _ in $(seq 100); do
  curl -fsS "$url/healthz" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { echo "demo: musterd failed to start" >&2; exit 1; }
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
# wait returns when a trapped signal arrives; stop() then ends the script
while kill -0 "$pid" 2>/dev/null; do wait "$pid" || true; done
