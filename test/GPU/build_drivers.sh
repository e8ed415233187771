#!/usr/bin/env bash
# Builds the three GPU drivers into DIR, on any machine with nvcc (the GPU
# machine's CUDA, or this one's: building here saves device time). run.sh
# uses them when given M2N_GPU_BIN=DIR; build them from the commit whose
# artifacts test/GPU/prepare.sh wrote.
#   test/GPU/build_drivers.sh .gpu/bin
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: build_drivers.sh DIR}
mkdir -p "$bin"
nvcc -O2 -std=c++17 -arch=sm_90 -I"$root/include" "$root/test/GPU/transfer_kernel_driver.cu" -o "$bin/m2n_transfer_driver" -lcuda &
"$root/test/GPU/build_runner.sh" "$bin/m2n_quantizing_runner" "$root/test/GPU/quantizing_runner.cu" &
"$root/test/GPU/build_runner.sh" "$bin/m2n_artifact_runner"
wait
echo "built $bin/m2n_transfer_driver, m2n_artifact_runner and m2n_quantizing_runner"
