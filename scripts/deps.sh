#!/usr/bin/env bash
# Installs the Debian 12 packages tokenline builds with, if any is missing. Idempotent.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev
          libpcg-cpp-dev libcli11-dev catch2 libbenchmark-dev clang-format clang-tidy zlib1g-dev
          clang libclang-rt-14-dev)  # clang + libFuzzer runtime: scripts/fuzz (the fuzz stage of scripts/test)
# scripts/notebooks (run by scripts/test): Debian's Jupyter, matplotlib and pandas, for /usr/bin/python3.
packages+=(jupyter-nbconvert python3-nbclient python3-ipykernel python3-matplotlib python3-pandas)
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
# The OpenAI SDK that tests/serve drives `tokenline serve` with (npm, pinned by tests/serve/package-lock.json):
# node and npm from Debian when absent, then `npm ci` when the lock changed since the last install.
if ! command -v npm >/dev/null 2>&1; then
  echo "installing: nodejs npm"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends nodejs npm
fi
serve_tests="$(cd "$(dirname "$0")/../tests/serve" && pwd)"
if [[ ! -f "$serve_tests/node_modules/.package-lock.json" ||
      "$serve_tests/package-lock.json" -nt "$serve_tests/node_modules/.package-lock.json" ]]; then
  (cd "$serve_tests" && npm ci --no-audit --no-fund --loglevel=error)
fi
