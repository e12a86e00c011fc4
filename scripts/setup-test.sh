#!/usr/bin/env bash
# What the test suite (and `npm run release`) needs beyond running a task: Neovim, Maven and a
# JDK, the aarch64 cross compiler and qemu-user (the linux-arm64 sidecar is cross-built and
# tried under emulation) from apt, then the VS Code test harness (scripts/setup-vscode-test.sh:
# Chromium, code-server and the Node it runs on). `npm test` runs this first; each step is
# skipped when its tools are already there, so a second run costs well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(neovim maven openjdk-17-jdk-headless)
# From x64 (the release machine) the linux-arm64 sidecar is cross-built.
[ "$(dpkg --print-architecture)" = amd64 ] && packages+=(g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup-test: missing packages ${missing[*]} and no root to install them" >&2; exit 1
  fi
  echo "setup-test: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

scripts/setup-vscode-test.sh
