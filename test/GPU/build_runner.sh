#!/usr/bin/env bash
# Builds test/GPU/artifact_runner.cu with the runtime (no MLIR) from its
# sources and the plain libraries, to the path given (the GPU machine has
# CUDA but no m2n build tree).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc -O2 -std=c++17 -arch=sm_90 -I"$root/include" -I"$root/runtime/include" \
  "$root/test/GPU/artifact_runner.cu" "$root/runtime/src/runtime.cpp" \
  "$root/runtime/src/cuda_backend.cpp" "$root/runtime/src/network.cpp" \
  "$root"/lib/Layout/*.cpp "$root"/lib/Sim/*.cpp "$root"/lib/Route/*.cpp \
  "$root"/lib/Codegen/*.cpp "$root"/lib/Artifact/*.cpp -lpthread -ldl -o "${1:?usage: build_runner.sh OUTPUT}"
