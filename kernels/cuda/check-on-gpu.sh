#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (sm_90; a few minutes on an H200): builds the kernels with
# CUDA, runs kernels_tests where it can be built (CPU tests plus every CUDA kernel against its CPU
# reference at test shapes), then tokenline_kernels_check, which prints per op the error against the CPU
# reference and the time per call of both backends at GLM-5.3-like per-GPU shapes. With the full project it
# then runs the model runner on the CUDA kernels against the CPU runner (runtime_tests) and one
# `tokenline run --backend cuda` next to `--backend cpu`, printing both summaries and per-op totals, and
# the own-profile loop on the CUDA kernels (scripts/bench-own-profile --backend cuda: `tokenline profile`,
# `calibrate --trace`, `sim --profile`, `run`, `compare`), which leaves a CUDA profile in
# <build>/own-profile/tp1/profile and prints the sim-vs-real table.
# Non-zero exit on failure.
# Usage: kernels/cuda/check-on-gpu.sh [build-dir]   (default: build-gpu in the repository root)
# Uses the full project when its dependencies are present, else kernels/standalone (CMake + CUDA only).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build-gpu}"
jobs="$(nproc)"

# NCCL from the CUDA toolkit, else from the nvidia-nccl Python wheel if one is installed.
nccl_args=()
if [[ ! -e /usr/local/cuda/include/nccl.h ]]; then
  wheel="$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)"
  if [[ -n "$wheel" && -e "$wheel/include/nccl.h" ]]; then
    nccl_args=(-DNCCL_INCLUDE_DIR="$wheel/include" -DNCCL_LIBRARY="$(ls "$wheel"/lib/libnccl.so* | head -n 1)")
    export LD_LIBRARY_PATH="$wheel/lib:${LD_LIBRARY_PATH:-}"
  fi
fi

mkdir -p "$build"
if cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTOKENLINE_ENABLE_CUDA=ON "${nccl_args[@]}" \
    >"$build/configure.log" 2>&1; then
  echo "configured the full project in $build"
else
  echo "full configure failed (missing simulator dependencies?); building kernels/standalone"
  build="$build-standalone"
  cmake -S "$root/kernels/standalone" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTOKENLINE_ENABLE_CUDA=ON "${nccl_args[@]}"
fi
targets=(tokenline_kernels_check)
available="$(cmake --build "$build" --target help | sed 's/^\.\.\. //')"
for t in kernels_tests runtime_tests tokenline; do
  if grep -q "^$t\b" <<<"$available"; then targets+=("$t"); fi
done
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

if [[ -x "$build/tests/kernels/kernels_tests" ]]; then
  "$build/tests/kernels/kernels_tests"
else
  echo "kernels_tests not built (needs Catch2, nlohmann_json, pcg-cpp); running the comparison at test shapes"
  "$build/kernels/tokenline_kernels_check" --tiny
fi
"$build/kernels/tokenline_kernels_check"

if [[ -x "$build/tests/engine/runtime/runtime_tests" && -x "$build/tokenline" ]]; then
  "$build/tests/engine/runtime/runtime_tests" "runner: the CUDA kernels*" --success | tail -n 3
  workload="synthetic:n=16,rate=1000,input=fixed:512,output=fixed:32,seed=1"
  for backend in cpu cuda; do
    "$build/tokenline" run --backend "$backend" --model glm-5.3-tiny --kv-pages 256 \
        --workload "$workload" --out "$build/run-$backend"
  done
  python3 - "$build/run-cpu/trace.json" "$build/run-cuda/trace.json" <<'PY' || true
import json, sys
def totals(path):
    t = {}
    for e in json.load(open(path))["traceEvents"]:
        if e.get("ph") == "X" and e["name"] != "step":
            t[e["name"]] = t.get(e["name"], 0.0) + e["dur"] / 1000.0
    return t
cpu, gpu = totals(sys.argv[1]), totals(sys.argv[2])
print(f"{'op':<20}{'cpu ms':>12}{'cuda ms':>12}")
for name in cpu:
    print(f"{name:<20}{cpu[name]:>12.2f}{gpu.get(name, 0.0):>12.2f}")
PY
  echo "own-profile loop on the CUDA kernels: profile -> calibrate --trace -> sim --profile vs run"
  "$root/scripts/bench-own-profile" --bin "$build/tokenline" --backend cuda --layouts tp1 \
      --out "$build/own-profile"
fi
