#!/usr/bin/env bash
# One short GPU call (about 4 minutes on an H200), run from the repository
# root after test/GPU/prepare.sh, carrying .gpu: the C API on the runners (23 reshards, two processes,
# a compiled group, 130 ranks refused, quantizing), the copy engine matrix,
# and the quantize probe (issue 32).
set -u
out=${1:?OUT}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
export NCCL_NVLS_ENABLE=0
R=/tmp/m2n_artifact_runner Q=/tmp/m2n_quantizing_runner
(nvcc -O3 -std=c++17 -arch=sm_90 bench/gpu/quantize_probe.cu -o /tmp/qp > "$out/probe_build.log" 2>&1) &
(test/GPU/build_runner.sh $Q test/GPU/quantizing_runner.cu > "$out/build_q.log" 2>&1) &
test/GPU/build_runner.sh $R > "$out/build_r.log" 2>&1 || { tail -20 "$out/build_r.log"; exit 1; }
run() { local name=$1 limit=$2; shift 2; timeout "$limit" "$@" > "$out/$name.log" 2>&1; echo "$name rc=$? $(grep -c PASS "$out/$name.log") PASS"; grep -E "FAIL|M2N_[A-Z_]+ at" "$out/$name.log" | head -5; tail -1 "$out/$name.log"; }
run reshards 120 $R .gpu/reshards.m2n
run processes 120 $R .gpu/reshards.m2n --processes 2 --repeat 1
run group_processes 120 $R .gpu/reshards.m2n --processes 2 --group
run refit_group 120 $R .gpu/refit-group.m2n --group
run many_ranks 60 $R .gpu/many-ranks.m2n --repeat 1
grep -h "at most 128" "$out/many_ranks.log" | head -2
run engine 120 $R .gpu/reshards-engine.m2n
wait
run quantizing 100 $Q .gpu/quantizing.m2n
timeout 90 /tmp/qp --ctas 132 > "$out/probe.log" 2>&1; echo "probe rc=$?"; cat "$out/probe.log"
