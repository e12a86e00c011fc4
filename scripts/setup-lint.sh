#!/usr/bin/env bash
# What `npm run lint` needs beyond the npm dependencies (ESLint, typescript-eslint, Prettier and
# StyLua's WebAssembly build come from npm): luacheck (Debian's lua-check) for the Neovim plugin,
# and ktlint (Maven Central, run on the JDK) for the JetBrains adapter. Each step is skipped when
# its tool is already there, so a second run costs well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(lua-check maven openjdk-17-jdk-headless)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup-lint: missing packages ${missing[*]} and no root to install them" >&2; exit 1
  fi
  echo "setup-lint: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

scripts/ktlint.sh --install
