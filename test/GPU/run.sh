#!/usr/bin/env bash
# On the GPU machine (it has CUDA but no MLIR): builds the two GPU drivers and
# runs them on files m2n produced here (test/GPU/prepare.sh writes them all):
#   build/bin/m2n-opt examples/example_a.mlir --m2n-pipeline |
#     python3 test/Utils/extract_ptx.py - > .gpu/m2n_transfer.ptx
#   build/bin/m2n-opt test/GPU/reshards.mlir "--m2n-pipeline=artifact=.gpu/reshards.m2n" -o /dev/null
#   build/bin/m2n-opt test/GPU/network.mlir "--m2n-pipeline=artifact=.gpu/network.m2n topology=test/GPU/split-by-gpu.json" -o /dev/null
#   test/GPU/run.sh .gpu OUT_DIR
set -euo pipefail
dir=$1
out=${2:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
nvcc -O2 -std=c++17 -arch=sm_90 -I"$root/include" "$root/test/GPU/transfer_kernel_driver.cu" -o /tmp/m2n_transfer_driver -lcuda
"$root/test/GPU/build_runner.sh" /tmp/m2n_artifact_runner
if [ -f "$dir/quantizing.m2n" ]; then
  "$root/test/GPU/build_runner.sh" /tmp/m2n_quantizing_runner "$root/test/GPU/quantizing_runner.cu" &
fi
status=0
/tmp/m2n_transfer_driver "$dir/m2n_transfer.ptx" all 2>&1 | tee "$out/transfer_kernel.log" || status=1
timeout 120 /tmp/m2n_transfer_driver "$dir/m2n_transfer.ptx" timeout 2>&1 | tee "$out/timeout.log" || status=1
timeout 300 /tmp/m2n_artifact_runner "$dir/reshards.m2n" 2>&1 | tee "$out/artifact_runner.log" || status=1
if [ -f "$dir/reshards-engine.m2n" ]; then
  timeout 300 /tmp/m2n_artifact_runner "$dir/reshards-engine.m2n" 2>&1 | tee "$out/artifact_runner_engine.log" || status=1
fi
for matrix in random random-vector random-engine; do
  if [ -f "$dir/$matrix.m2n" ]; then
    timeout 300 /tmp/m2n_artifact_runner "$dir/$matrix.m2n" --repeat 1 2>&1 | tee "$out/artifact_runner_$matrix.log" || status=1
  fi
done
# Buffers 8 bytes past a 16-byte boundary, compiled for them (buffer-align=8:
# no TMA item touches a caller buffer).
if [ -f "$dir/random-align8.m2n" ]; then
  timeout 300 /tmp/m2n_artifact_runner "$dir/random-align8.m2n" --repeat 1 --misalign 8 2>&1 | tee "$out/artifact_runner_misaligned.log" || status=1
fi
# Quantizing reshards: three launches of one binding, each with its own data.
wait
if [ -f "$dir/quantizing.m2n" ]; then
  timeout 120 /tmp/m2n_quantizing_runner "$dir/quantizing.m2n" 2>&1 | tee "$out/quantizing.log" || status=1
  for variant in stage72k stage20k bands; do
    if [ -f "$dir/quantizing-$variant.m2n" ]; then
      timeout 120 /tmp/m2n_quantizing_runner "$dir/quantizing-$variant.m2n" 2>&1 | tee "$out/quantizing-$variant.log" || status=1
    fi
  done
fi
# 130 virtual ranks waiting for each other on one GPU, which runs at most
# 128 kernels at once: refused at bind with a message, not a timeout.
if [ -f "$dir/many-ranks.m2n" ] && [ "$(nvidia-smi -L | wc -l)" -eq 1 ]; then
  timeout 60 /tmp/m2n_artifact_runner "$dir/many-ranks.m2n" --repeat 1 2>&1 | tee "$out/many_ranks.log"
  grep -q "runs at most 128 kernels at once" "$out/many_ranks.log" || { echo "FAIL many-ranks: not refused"; status=1; }
fi
# Several processes: buffer handles exchanged through an all-gather. One
# per GPU where there are several; on one GPU two processes share it (CUDA
# IPC within the device), so the multi-process path runs on every GPU run.
gpus=$(nvidia-smi -L | wc -l)
processes=$(( gpus >= 2 ? gpus : 2 ))
timeout 300 /tmp/m2n_artifact_runner "$dir/reshards.m2n" --processes "$processes" --repeat 1 2>&1 | tee "$out/artifact_runner_processes.log" || status=1
timeout 300 /tmp/m2n_artifact_runner "$dir/reshards.m2n" --processes "$processes" --group 2>&1 | tee "$out/group_processes.log" || status=1
# Network steps (the GPUs as two domains) go through NCCL: torch's copy. On
# one GPU both domains are virtual ranks of it, and the runtime copies the
# network steps itself.
nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl:+$nccl:}${LD_LIBRARY_PATH:-}
for matrix in network network-bcast; do
  [ -f "$dir/$matrix.m2n" ] || continue
  timeout 120 /tmp/m2n_artifact_runner "$dir/$matrix.m2n" 2>&1 | tee "$out/$matrix.log" || status=1
  if [ "$gpus" -ge 2 ]; then
    timeout 120 /tmp/m2n_artifact_runner "$dir/$matrix.m2n" --processes "$gpus" 2>&1 | tee "$out/${matrix}_processes.log" || status=1
  fi
done
# (After NCCL's path is set: the network matrix too.) Every reshard of a matrix at once, as one group (one kernel per rank).
for matrix in reshards random random-engine network refit-group; do
  if [ -f "$dir/$matrix.m2n" ]; then
    timeout 300 /tmp/m2n_artifact_runner "$dir/$matrix.m2n" --group 2>&1 | tee "$out/group_$matrix.log" || status=1
  fi
done
exit $status
