#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine (or an existing one) to build Dline core and run a task:
# system packages, npm 11, the npm dependencies (better-sqlite3 builds from source offline),
# then the build (dist/dline-core and dist/dline; the first build also fetches the pinned Node
# the sidecar embeds and compiles better-sqlite3 for it). What only the tests need (Neovim,
# Maven, a JDK, code-server, Chromium) is scripts/setup-test.sh's, which `npm test` runs.
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages the build and a task use (node-gyp needs the C++ toolchain and python3;
# checkpoints need git). Installed only when something is missing.
packages=(git curl ca-certificates build-essential python3)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup: missing packages ${missing[*]} and no root to install them" >&2; exit 1
  fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The machine's Node runs npm, the build scripts and the tests (vite 8 wants 20.19+); the sidecar
# embeds its own, pinned Node.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "setup: Node $(node --version) is too old: building Dline needs Node 20.19+" >&2
  exit 1
fi
# vite 8 (vitest 4) needs npm 11; some images start with npm 10.
if [ "$(npm --version | cut -d. -f1)" -lt 11 ]; then
  echo "setup: upgrading npm to 11"
  npm install -g npm@11.19.1 >/dev/null
fi

# npm checks each package's "engines" against the Node that runs it, and some packages declare
# Node 22+ (connect-node, protoc-gen-es, vsce). So the install runs on the Node the sidecar
# embeds (scripts/node-runtime.json, fetched and checked first), with install scripts off; then
# the machine's Node runs them (better-sqlite3 compiles its addon for the Node that runs the tests).
node24_bin=$(node scripts/lib/node-runtime.mjs --node-only | node -p 'require("node:path").dirname(JSON.parse(require("node:fs").readFileSync(0, "utf8")).node)')
PATH="$node24_bin:$PATH" npm ci --no-audit --no-fund --ignore-scripts
npm rebuild
npm run build
