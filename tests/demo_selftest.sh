#!/usr/bin/env bash
# scripts/demo.sh: a taken port leaves the demo's data directory as it was (exit 1, saying
# so); a running demo stops on Ctrl-C (SIGINT) with exit 0, musterd gone, its store kept.
# Usage: tests/demo_selftest.sh SOURCE_DIR BUILD_DIR (CTest runs it as "demo").
set -eu
src=$1
build=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/muster-demo-test.XXXXXX")
holder=
demo=
cleanup() {
  [ -n "$holder" ] && kill "$holder" 2>/dev/null
  [ -n "$demo" ] && kill "$demo" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "demo_selftest: $*" >&2; [ -f "$tmp/out" ] && cat "$tmp/out" >&2; exit 1; }

# a port something listens on (python's http.server), and a data dir with a marker
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$tmp" >/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
mkdir -p "$tmp/data" && echo kept >"$tmp/data/marker"
if MUSTER_DEMO_LISTEN="127.0.0.1:$port" MUSTER_DEMO_DATA="$tmp/data" \
  bash "$src/scripts/demo.sh" "$build" >"$tmp/out" 2>&1; then
  fail "a taken port: the demo should fail"
fi
grep -q "127.0.0.1:$port is taken" "$tmp/out" || fail "no word of the taken port"
[ "$(cat "$tmp/data/marker" 2>/dev/null)" = kept ] || fail "the data directory was touched"
kill "$holder"; wait "$holder" 2>/dev/null || true; holder=

# a free port: the demo runs; SIGINT stops it cleanly. A script's background job starts
# with SIGINT ignored (POSIX), as a terminal's Ctrl-C would not find it: python gives it
# the default disposition back before running the demo.
MUSTER_DEMO_LISTEN="127.0.0.1:$port" MUSTER_DEMO_DATA="$tmp/data" python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("bash", ["bash"] + sys.argv[1:])' "$src/scripts/demo.sh" "$build" >"$tmp/out" 2>&1 &
demo=$!
for _ in $(seq 300); do grep -q "demo is running" "$tmp/out" && break; sleep 0.1; done
grep -q "demo is running" "$tmp/out" || fail "the demo did not start"
kill -INT "$demo"
status=0
wait "$demo" || status=$?
demo=
[ "$status" = 0 ] || fail "Ctrl-C: exit $status, not 0"
grep -q "demo stopped" "$tmp/out" || fail "Ctrl-C: no 'demo stopped'"
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then fail "musterd still listens"; fi
[ -f "$tmp/data/data.mdb" ] || ls "$tmp/data" | grep -q . || fail "the store is gone"
echo "demo_selftest: ok"
