#!/usr/bin/env bash
# Builds test/GPU/artifact_runner.cu with the runtime from its sources, to
# the path given (the GPU machine has CUDA but no m2n build tree): the
# runtime, the artifact format and the base types (what libm2n_runtime.so
# holds), and the runner's test-data library (lib/Sim/RankData.cpp).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc -O2 -std=c++17 -arch=sm_90 -I"$root/include" -I"$root/runtime/include" \
  "$root/test/GPU/artifact_runner.cu" "$root/runtime/src/runtime.cpp" \
  "$root/runtime/src/cuda_backend.cpp" "$root/runtime/src/network.cpp" \
  "$root/runtime/src/HostExecutor.cpp" "$root"/lib/Base/*.cpp \
  "$root"/lib/Artifact/*.cpp "$root/lib/Sim/RankData.cpp" \
  -lpthread -ldl -o "${1:?usage: build_runner.sh OUTPUT}"
