#!/usr/bin/env bash
# On the GPU machine (it has CUDA but no MLIR): builds the two GPU drivers and
# runs them on files m2n produced here (test/GPU/prepare.sh writes them all):
#   test/GPU/prepare.sh            (here; writes .gpu/, carry it)
#   test/GPU/run.sh .gpu OUT_DIR   (there)
# Each step's log goes to OUT_DIR/NAME.log, and after every step all logs are
# packed into OUT_DIR/logs.tgz (one file to bring back, even from a run cut
# short). M2N_GPU_DEADLINE=SECONDS ends every step by then (seconds since
# the start): a step cut short fails, later ones are reported as not run.
# M2N_GPU_SKIP="NAME ..." skips the steps so named (passed on this code in
# an earlier call). M2N_GPU_BIN=DIR runs the drivers test/GPU/build_drivers.sh
# built there (on the machine that prepared .gpu, from the same commit)
# instead of building them here.
set -euo pipefail
dir=$1
out=${2:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
deadline=${M2N_GPU_DEADLINE:-0}
mkdir -p "$out"
status=0
pack() {
  # (Written beside, not inside, the folder it packs.)
  local packed
  packed=$(mktemp)
  tar czf "$packed" -C "$out" --exclude=logs.tgz . && mv "$packed" "$out/logs.tgz"
}
# step NAME SECONDS COMMAND...: runs COMMAND under a timeout into NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  # M2N_GPU_SKIP="NAME ...": steps a previous run of the same code passed.
  if [[ " ${M2N_GPU_SKIP:-} " == *" $name "* ]]; then
    echo "SKIPPED $name (M2N_GPU_SKIP)" | tee "$out/$name.log"
    return
  fi
  if [ "$deadline" -gt 0 ]; then
    if [ $((deadline - SECONDS)) -lt 10 ]; then
      echo "NOT RUN $name: past M2N_GPU_DEADLINE=$deadline s" | tee "$out/$name.log"
      status=1
      return
    fi
    limit=$((limit < deadline - SECONDS ? limit : deadline - SECONDS))
  fi
  timeout "$limit" "$@" 2>&1 | tee "$out/$name.log" || { echo "FAIL $name"; status=1; }
  pack
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
gpus=$(nvidia-smi -L | wc -l)
if [ -n "${M2N_GPU_BIN:-}" ]; then
  for driver in m2n_transfer_driver m2n_artifact_runner m2n_quantizing_runner; do
    cp "$M2N_GPU_BIN/$driver" "/tmp/$driver"
  done
else
  "$root/test/GPU/build_drivers.sh" /tmp
fi
step transfer_kernel 300 /tmp/m2n_transfer_driver "$dir/m2n_transfer.ptx" all
step timeout 120 /tmp/m2n_transfer_driver "$dir/m2n_transfer.ptx" timeout
step artifact_runner 300 /tmp/m2n_artifact_runner "$dir/reshards.m2n"
# The ranks of a device on one stream (one kernel launch for all of them).
step artifact_runner_shared_stream 300 /tmp/m2n_artifact_runner "$dir/reshards.m2n" --stream-per-device
[ -f "$dir/reshards-engine.m2n" ] && step artifact_runner_engine 300 /tmp/m2n_artifact_runner "$dir/reshards-engine.m2n"
for matrix in random random-vector random-engine; do
  [ -f "$dir/$matrix.m2n" ] && step "artifact_runner_$matrix" 300 /tmp/m2n_artifact_runner "$dir/$matrix.m2n" --repeat 1
done
# NVIDIA nccl_m2n's correctness matrix (test/GPU/nccl_m2n_matrix.py), 8 ranks.
[ -f "$dir/nccl-m2n.m2n" ] && step artifact_runner_nccl_m2n 300 /tmp/m2n_artifact_runner "$dir/nccl-m2n.m2n" --repeat 1 --stream-per-device
# Buffers 8 bytes past a 16-byte boundary, compiled for them (buffer-align=8:
# no TMA item touches a caller buffer).
[ -f "$dir/random-align8.m2n" ] && step artifact_runner_misaligned 300 /tmp/m2n_artifact_runner "$dir/random-align8.m2n" --repeat 1 --misalign 8
# Quantizing reshards: three launches of one binding, each with its own data.
if [ -f "$dir/quantizing.m2n" ]; then
  step quantizing 120 /tmp/m2n_quantizing_runner "$dir/quantizing.m2n"
  for variant in stage72k stage20k bands on-sources; do
    [ -f "$dir/quantizing-$variant.m2n" ] && step "quantizing-$variant" 120 /tmp/m2n_quantizing_runner "$dir/quantizing-$variant.m2n"
  done
fi
# 130 virtual ranks waiting for each other on one GPU, which runs at most
# 128 kernels at once, each on its stream: refused with a message, not a
# timeout.
if [ -f "$dir/many-ranks.m2n" ] && [ "$gpus" -eq 1 ]; then
  # (Its status is the message below, whatever the runner returns.)
  step many_ranks 60 bash -c '"$0" "$1" --repeat 1 || true' /tmp/m2n_artifact_runner "$dir/many-ranks.m2n"
  grep -q "NOT RUN\|runs at most 128 kernels at once" "$out/many_ranks.log" || { echo "FAIL many-ranks: not refused"; status=1; }
fi
# 256 ranks (issue 35, item 7): on one stream one launch of 256 CTAs, which
# must pass; a stream each would be 256 kernels, refused at launch.
if [ -f "$dir/256-ranks.m2n" ] && [ "$gpus" -eq 1 ]; then
  step 256_ranks_one_stream 120 /tmp/m2n_artifact_runner "$dir/256-ranks.m2n" --repeat 1 --stream-per-device
  step 256_ranks_stream_each 60 bash -c '"$0" "$1" --repeat 1 || true' /tmp/m2n_artifact_runner "$dir/256-ranks.m2n"
  grep -q "NOT RUN\|runs at most 128 kernels at once" "$out/256_ranks_stream_each.log" || { echo "FAIL 256 ranks, a stream each: not refused"; status=1; }
fi
# Two ranks of 132 CTAs each, one SM each (64 KiB stages), waiting for each
# other: more CTAs than a GPU of up to 263 SMs holds at once, refused at bind.
if [ -f "$dir/too-many-ctas.m2n" ] && [ "$gpus" -eq 1 ]; then
  step too_many_ctas 60 bash -c '"$0" "$1" --repeat 1 || true' /tmp/m2n_artifact_runner "$dir/too-many-ctas.m2n"
  grep -q "NOT RUN\|SMs hold at once" "$out/too_many_ctas.log" || { echo "FAIL too-many-ctas: not refused"; status=1; }
fi
# Several processes: buffer handles exchanged through an all-gather. One
# per GPU where there are several; on one GPU two processes share it (CUDA
# IPC within the device), so the multi-process path runs on every GPU run.
processes=$(( gpus >= 2 ? gpus : 2 ))
step artifact_runner_processes 300 /tmp/m2n_artifact_runner "$dir/reshards.m2n" --processes "$processes" --repeat 1
step group_processes 300 /tmp/m2n_artifact_runner "$dir/reshards.m2n" --processes "$processes" --group
# Network steps (the GPUs as two domains) go through NCCL: torch's copy. On
# one GPU both domains are virtual ranks of it, and the runtime copies the
# network steps itself.
nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl:+$nccl:}${LD_LIBRARY_PATH:-}
for matrix in network network-bcast; do
  [ -f "$dir/$matrix.m2n" ] || continue
  step "$matrix" 120 /tmp/m2n_artifact_runner "$dir/$matrix.m2n"
  if [ "$gpus" -ge 2 ]; then
    step "${matrix}_processes" 120 /tmp/m2n_artifact_runner "$dir/$matrix.m2n" --processes "$gpus"
  fi
done
# (After NCCL's path is set: the network matrix too.) Every reshard of a
# matrix at once, as one group (one kernel per rank).
for matrix in reshards random random-engine network refit-group; do
  [ -f "$dir/$matrix.m2n" ] && step "group_$matrix" 300 /tmp/m2n_artifact_runner "$dir/$matrix.m2n" --group
done
step group_reshards_shared_stream 300 /tmp/m2n_artifact_runner "$dir/reshards.m2n" --group --stream-per-device
pack
[ "$status" -eq 0 ] && echo "GPU matrix: every step passed" || echo "GPU matrix: a step failed or did not run"
exit $status
