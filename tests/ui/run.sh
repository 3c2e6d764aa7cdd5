#!/usr/bin/env bash
# Browser tests of the web UI: tests/ui/run.sh [BUILD_DIR] (make test-ui runs it).
# Installs what is missing (Debian chromium, playwright-core from npm), starts musterd on a
# random port with a fresh data dir, runs `node --test`, stops musterd; non-zero on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build="$root/$build" ;; esac

# Debian chromium (apt-get install -y chromium) and node/npm when missing, via the project's
# installer (it runs apt-get update first).
if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "ui: installing chromium / nodejs / npm from Debian" >&2
  "$root/scripts/install-deps.sh" --ui
fi
if [ ! -d "$here/node_modules/playwright-core" ] || [ ! -d "$here/node_modules/axe-core" ]; then
  (cd "$here" && npm ci --no-audit --no-fund >/dev/null)
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/muster-ui.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# grace_period: the demo's victims stay terminating for the whole suite, so every test sees the
# preemptions of the first cycle as they were (nominations and Pipelined jobs included),
# however long the suite before it ran
cat >"$tmp/musterd.yaml" <<CFG
cycle_interval: 0
timeseries_interval: 1
grace_period: 600
mark_running: true
sync: none
log_level: warn
ui_dir: $root/web/static
CFG
"$build/bin/musterd" --config "$tmp/musterd.yaml" --data-dir "$tmp/data" \
  --listen 127.0.0.1:0 --port-file "$tmp/port" 2>"$tmp/musterd.log" &
pid=$!
for _ in $(seq 100); do
  [ -s "$tmp/port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/musterd.log" >&2; echo "ui: musterd failed to start" >&2; exit 1; }
  sleep 0.1
done
[ -s "$tmp/port" ] || { echo "ui: musterd wrote no port file" >&2; exit 1; }

mkdir -p "$here/artifacts"
export MUSTER_URL="http://127.0.0.1:$(cat "$tmp/port")"
export MUSTER_SOURCE_DIR="$root"
export MUSTER_BIN_DIR="$build/bin" # for tests that start a musterd of their own
cd "$here"
status=0
timeout 300 node --test --test-concurrency=1 --test-reporter=spec ${UI_TEST_PATTERN:+--test-name-pattern="$UI_TEST_PATTERN"} ./*.test.mjs || status=$?
if [ "$status" != 0 ]; then
  echo "ui: tests failed (status $status); musterd log:" >&2
  tail -n 30 "$tmp/musterd.log" >&2
fi
exit "$status"
