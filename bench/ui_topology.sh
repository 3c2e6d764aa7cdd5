#!/usr/bin/env bash
# Times the topology page on a 5,000-node cluster: bench/ui_topology.sh [BUILD_DIR] [--nodes N]
# Starts musterd on a random port with a fresh store, runs bench/ui_topology.mjs, stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}; shift || true
case $build in /*) ;; *) build="$root/$build" ;; esac
[ -d "$root/tests/ui/node_modules/playwright-core" ] || (cd "$root/tests/ui" && npm ci --no-audit --no-fund >/dev/null)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/muster-uibench.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill -TERM $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
printf 'cycle_interval: 0\nsync: none\nlog_level: warn\nmark_running: true\nui_dir: %s\n' \
  "$root/web/static" >"$tmp/musterd.yaml"
"$build/bin/musterd" --config "$tmp/musterd.yaml" --data-dir "$tmp/data" --listen 127.0.0.1:0 \
  --port-file "$tmp/port" 2>"$tmp/log" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
node "$root/bench/ui_topology.mjs" "http://127.0.0.1:$(cat "$tmp/port")" "$@"
