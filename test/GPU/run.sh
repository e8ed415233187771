#!/usr/bin/env bash
# On the GPU machine: builds the transfer-kernel driver and runs it on the PTX
# that `m2n-opt --m2n-pipeline` produced here (the GPU machine has no MLIR):
#   build/bin/m2n-opt examples/example_a.mlir --m2n-pipeline |
#     python3 test/Utils/extract_ptx.py - > .gpu/m2n_transfer.ptx
#   test/GPU/run.sh .gpu/m2n_transfer.ptx OUT_DIR
set -euo pipefail
ptx=$1
out=${2:-.}
here=$(dirname "$0")
nvcc -O2 -std=c++17 -arch=sm_90 "$here/transfer_kernel_driver.cu" -o /tmp/m2n_transfer_driver -lcuda
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
status=0
/tmp/m2n_transfer_driver "$ptx" all 2>&1 | tee "$out/transfer_kernel.log" || status=1
timeout 120 /tmp/m2n_transfer_driver "$ptx" timeout 2>&1 | tee "$out/timeout.log" || status=1
exit $status
