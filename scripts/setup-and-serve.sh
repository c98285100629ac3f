#!/usr/bin/env bash
# From a fresh clone to a running server on the embedded default (SQLite + local disk + in-process
# worker). Installs the system packages it needs with apt-get when missing (ffmpeg, the speech
# engines: scripts/install-system-packages.sh), then the npm dependencies, then starts. Each step
# prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

setup_started=$SECONDS
# timed NAME COMMAND...: runs one step and prints its duration.
timed() {
  local name=$1 started=$SECONDS
  shift
  echo "[setup] $name"
  "$@"
  echo "[setup] $name: done in $((SECONDS - started)) s"
}

if ! command -v node >/dev/null 2>&1 || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "Node.js 20 or newer is required (found $(node --version 2>/dev/null || echo none))." >&2
  exit 1
fi

timed "system packages (apt-get, only what is missing)" bash scripts/install-system-packages.sh

# better-sqlite3 may need to compile from source: make sure a compiler and Python are there.
build_tools() {
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/lipsync-apt.XXXXXX")
  if ! { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ make python3; } >"$log" 2>&1; then
    tail -n 25 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}
if ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
  timed "build tools for better-sqlite3 (apt-get: g++ make python3)" build_tools
fi

# ONNXRUNTIME_NODE_INSTALL=skip: onnxruntime-node would otherwise download its CUDA libraries (the
# service runs it on the CPU); npm 11 skips that script anyway (package.json allowScripts), npm 10
# does not. The `prepare` script builds dist/.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  timed "npm dependencies (npm ci, then the build)" env ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
else
  echo "[setup] npm dependencies: up to date"
fi
if [ ! -f dist/cli/index.js ]; then
  timed "build (tsc)" npm run --silent build
fi

echo "[setup] ready in $((SECONDS - setup_started)) s; starting the server"
# --create: the first start makes the database in ./data (operator commands refuse to create one unasked).
exec node bin/lipsync.js serve --create
