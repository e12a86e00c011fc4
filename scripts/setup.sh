#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine (or an existing one) to build and test Dline core:
# system packages, npm 11, the npm dependencies (better-sqlite3 builds from source offline),
# then the build (dist/dline-core and dist/dline). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages the build and the tests use. Installed only when something is missing.
packages=(git curl ca-certificates build-essential python3 neovim maven openjdk-17-jdk-headless)
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

node_major=$(node -p 'process.versions.node.split(".")[0]')
node_minor=$(node -p 'process.versions.node.split(".")[1]')
if [ "$node_major" -lt 20 ] || { [ "$node_major" = 20 ] && [ "$node_minor" -lt 12 ]; }; then
  echo "setup: Node $(node --version) is too old: Dline needs Node 20.12+ (single executable assets)" >&2
  exit 1
fi
# vite 8 (vitest 4) needs npm 11; some images start with npm 10.
if [ "$(npm --version | cut -d. -f1)" -lt 11 ]; then
  echo "setup: upgrading npm to 11"
  npm install -g npm@11.19.1 >/dev/null
fi

npm ci --no-audit --no-fund
npm run build

# The VS Code end-to-end test (test/vscode): chromium, code-server and its Node 24, in .cache/.
scripts/setup-vscode-test.sh
