#!/usr/bin/env bash
# On the GPU machine: unpacks the compiler libraries packed here by
# pack_compiler_libs.sh and runs m2n-run's CUDA backend on the GPU matrix,
# the Python frontend's GPU tests, the DTensor check, the process-group check
# and the paper's examples with torch CUDA tensors. Every step has a time limit: a hang is a failure.
#   test/GPU/python_gpu.sh ARCHIVE.tar.xz OUT_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
archive=${1:?usage: python_gpu.sh ARCHIVE OUT_DIR}
out=${2:-.}
libs=$(mktemp -d)
tar -C "$libs" -xJf "$archive"
export M2N_LIB_DIR=$libs/lib LD_LIBRARY_PATH=$libs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export M2N_CACHE_DIR=$out/m2n-cache
status=0
nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl:+$nccl:}$LD_LIBRARY_PATH
timeout 150 "$libs/bin/m2n-run" "$root/test/GPU/reshards.mlir" --backend cuda --bench 3 2>&1 | tee "$out/m2n-run.log" || status=1
timeout 60 "$libs/bin/m2n-run" "$root/test/GPU/network.mlir" --backend cuda \
  --pipeline="topology=$root/test/GPU/split-by-gpu.json" 2>&1 | tee -a "$out/m2n-run.log" || status=1
timeout 150 python3 -m pytest -q -p no:cacheprovider "$root/python/tests" 2>&1 | tee "$out/pytest.log" || status=1
# DTensor in and out, one process per GPU (the process-group communicator).
timeout 100 torchrun --nproc-per-node "$(nvidia-smi -L | wc -l)" "$root/python/tests/gpu_dtensor_check.py" 2>&1 \
  | tee "$out/dtensor.log" || status=1
# One process per rank, five of them, on however many GPUs there are
# (gloo's group where processes share a GPU): moves, casts and quantizing.
timeout 200 torchrun --nproc-per-node 5 "$root/python/tests/gpu_process_group_check.py" 2>&1 \
  | tee "$out/process_group.log" || status=1
for example in example_a example_b; do
  timeout 60 python3 "$root/examples/python/$example.py" --cuda 2>&1 | tee -a "$out/examples.log" || status=1
done
exit $status
