#!/usr/bin/env bash
# Builds a GPU driver (test/GPU/artifact_runner.cu, or the one given) with
# the runtime from its sources, to the path given (the GPU machine has CUDA
# but no m2n build tree): the runtime, the artifact format and the base
# types (what libm2n_runtime.so holds), and the drivers' test-data
# libraries: the seeded values (lib/Sim/RankData.cpp) and the quantizing
# simulator with the plain C++ stages it uses (lib/Sim, lib/Plan,
# lib/Route).
#   test/GPU/build_runner.sh OUTPUT [DRIVER.cu]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
driver=${2:-$root/test/GPU/artifact_runner.cu}
nvcc -O2 -std=c++17 -arch=sm_90 -I"$root/include" -I"$root/runtime/include" \
  "$driver" $(ls "$root"/runtime/src/*.cpp | grep -v /NoCuda.cpp) \
  "$root"/lib/Base/*.cpp \
  "$root"/lib/Artifact/*.cpp "$root"/lib/Sim/*.cpp "$root"/lib/Plan/*.cpp \
  "$root"/lib/Route/*.cpp \
  -lpthread -ldl -o "${1:?usage: build_runner.sh OUTPUT [DRIVER.cu]}"
