#!/usr/bin/env bash
# Installs the Debian 12 packages tokenline builds with, if any is missing. Idempotent.
set -euo pipefail
packages=(build-essential cmake pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev
          libpcg-cpp-dev libcli11-dev catch2 libbenchmark-dev clang-format clang-tidy
          clang libclang-rt-14-dev)  # clang + libFuzzer runtime: scripts/fuzz (the fuzz stage of scripts/test)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
