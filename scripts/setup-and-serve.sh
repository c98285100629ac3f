#!/usr/bin/env bash
# From a fresh clone to a running server on the embedded default (SQLite + local disk + in-process
# worker). Installs the system packages it needs with apt-get when missing (ffmpeg, the speech
# engines: scripts/install-system-packages.sh), then the npm dependencies, then starts.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

bash scripts/install-system-packages.sh
# better-sqlite3 may need to compile from source: make sure a compiler and Python are there.
if ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
  echo "Installing build tools (apt-get)…"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ make python3
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node.js 20 or newer is required (found $(node --version))." >&2
  exit 1
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci
fi
[ -f dist/cli/index.js ] || npm run build

# --create: the first start makes the database in ./data (operator commands refuse to create one unasked).
exec node bin/lipsync.js serve --create
