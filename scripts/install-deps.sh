#!/usr/bin/env bash
# Installs the Debian packages muster needs to build, test and run, if any are missing.
# Usage: scripts/install-deps.sh [--ui]   (--ui adds Chromium and Node for the browser tests)
# (locales: test_json_read builds a locale with a comma decimal point with its localedef)
set -euo pipefail

pkgs=(gcc make cmake pkg-config liblmdb-dev lmdb-utils libcivetweb-dev libjansson-dev
      libcurl4-openssl-dev libyaml-dev libssl-dev zlib1g-dev libjemalloc-dev libevent-dev
      libhttp-parser-dev check curl python3 openssl locales libcairo2-dev libfontconfig-dev
      libpq-dev postgresql)
if [ "${1:-}" = "--ui" ]; then
  pkgs+=(chromium nodejs npm)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

# node/npm may come from elsewhere on this machine; skip them when they already work
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do
    case "$p" in nodejs|npm) ;; *) filtered+=("$p") ;; esac
  done
  missing=("${filtered[@]}")
  [ ${#missing[@]} -eq 0 ] && exit 0
fi

echo "installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
