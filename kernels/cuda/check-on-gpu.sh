#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (sm_90; < 5 min on an H200): builds the kernels with CUDA,
# runs kernels_tests (CPU tests plus every CUDA kernel against its CPU reference), then
# tokenline_kernels_check, which prints per op the normalized error against the CPU reference and the
# time per call on both backends at GLM-5.3-like per-GPU shapes. Exits non-zero on any failure.
# Usage: kernels/cuda/check-on-gpu.sh [build-dir]   (default: build-gpu in the repository root)
# Uses the full project when its dependencies are present, else kernels/standalone (no SimGrid/Boost).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build-gpu}"
jobs="$(nproc)"

if cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTOKENLINE_ENABLE_CUDA=ON >"$build.configure.log" 2>&1; then
  tests_dir="$build/tests/kernels"
else
  echo "full configure failed (see $build.configure.log); using kernels/standalone"
  build="$build-standalone"
  cmake -S "$root/kernels/standalone" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTOKENLINE_ENABLE_CUDA=ON
  tests_dir="$build/tests/kernels"
fi
cmake --build "$build" -j"$jobs" --target kernels_tests tokenline_kernels_check tokenline_cuda_probe

"$build/kernels/tokenline_cuda_probe"
"$tests_dir/kernels_tests"
"$build/kernels/tokenline_kernels_check"
