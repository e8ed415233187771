#!/usr/bin/env bash
# The GPU benchmark of issue 6: m2n against its baselines, every row measured
# in the same run on 2 GPUs. Two halves, because the GPU machine has no MLIR:
#   here:            bench/gpu/run.sh compile        (writes .gpu/bench.m2n)
#   GPU machine:     bench/gpu/run.sh measure OUT    (carry .gpu), or its
#                    parts measure-m2n, measure-variants, measure-baselines
#                    (one call each, same warm machine), then
#                    bench/gpu/run.sh report OUT here
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
case "${1:-}" in
compile)
  mkdir -p "$root/.gpu"
  python3 "$root/bench/gpu/make_bench_ir.py" > "$root/.gpu/bench.mlir"
  "$root/build/bin/m2n-opt" "$root/.gpu/bench.mlir" "--m2n-pipeline=artifact=$root/.gpu/bench.m2n" -o /dev/null
  # The reductions again, routed reduce-scatter + all-gather (reduce-share).
  python3 "$root/bench/gpu/make_bench_ir.py" --only all_reduce,p_to_r > "$root/.gpu/bench-share.mlir"
  "$root/build/bin/m2n-opt" "$root/.gpu/bench-share.mlir" "--m2n-pipeline=artifact=$root/.gpu/bench-share.m2n reduce-share=true" -o /dev/null
  # Every row again with contiguous source copies of >= 1 MiB (a rank's own
  # and its peers') on the copy engine.
  "$root/build/bin/m2n-opt" "$root/.gpu/bench.mlir" "--m2n-pipeline=artifact=$root/.gpu/bench-engine.m2n copy-engine=true" -o /dev/null
  echo "wrote $root/.gpu/bench.m2n, bench-share.m2n and bench-engine.m2n" ;;
measure|measure-m2n|measure-variants|measure-baselines)
  # `measure` runs every part and the report; the parts alone fit the GPU
  # machine's 10-minute calls (then: run.sh report OUT here, with the parts'
  # files in one OUT).
  out=${2:?usage: run.sh measure OUT_DIR}
  mkdir -p "$out"
  export NCCL_NVLS_ENABLE=0
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
  if [ "$1" = measure ] || [ "$1" = measure-m2n ] || [ "$1" = measure-variants ]; then
    "$root/test/GPU/build_runner.sh" /tmp/m2n_artifact_runner # never a stale one
  fi
  if [ "$1" = measure ] || [ "$1" = measure-m2n ]; then
    timeout 400 /tmp/m2n_artifact_runner "$root/.gpu/bench.m2n" --repeat 10 --checks 1 --csv "$out/m2n.csv" 2>&1 | tee "$out/m2n.log"
  fi
  if [ "$1" = measure ] || [ "$1" = measure-variants ]; then
    timeout 200 /tmp/m2n_artifact_runner "$root/.gpu/bench-share.m2n" --repeat 10 --checks 1 --csv "$out/m2n-share.csv" 2>&1 | tee "$out/m2n-share.log"
    if [ -f "$root/.gpu/bench-engine.m2n" ]; then
      timeout 400 /tmp/m2n_artifact_runner "$root/.gpu/bench-engine.m2n" --repeat 10 --checks 1 --csv "$out/m2n-engine.csv" 2>&1 | tee "$out/m2n-engine.log"
    fi
  fi
  if [ "$1" = measure ] || [ "$1" = measure-baselines ]; then
    timeout 300 torchrun --nproc-per-node 2 "$root/bench/gpu/baselines.py" "$out/baselines.csv" --repeat 10 2>&1 | tee "$out/baselines.log"
  fi
  if [ "$1" = measure ]; then
    "$0" report "$out"
  fi ;;
measure-1gpu)
  # The 1-GPU form: every row on GPU 0 (virtual ranks), the default
  # artifact, reduce-share and the copy engine, with cudaMemcpyAsync on the
  # same GPU as the reference of the 1-to-1 rows (no NCCL: it needs one GPU
  # per rank). Then: run.sh report-1gpu OUT here.
  out=${2:?usage: run.sh measure-1gpu OUT_DIR}
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
  "$root/test/GPU/build_runner.sh" /tmp/m2n_artifact_runner
  export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
  timeout 300 /tmp/m2n_artifact_runner "$root/.gpu/bench.m2n" --repeat 10 --checks 1 --csv "$out/m2n-1gpu.csv" 2>&1 | tee "$out/m2n-1gpu.log"
  timeout 150 /tmp/m2n_artifact_runner "$root/.gpu/bench-share.m2n" --repeat 10 --checks 1 --refs 0 --csv "$out/m2n-share-1gpu.csv" 2>&1 | tee "$out/m2n-share-1gpu.log"
  timeout 300 /tmp/m2n_artifact_runner "$root/.gpu/bench-engine.m2n" --repeat 10 --checks 1 --refs 0 --csv "$out/m2n-engine-1gpu.csv" 2>&1 | tee "$out/m2n-engine-1gpu.log" ;;
report-1gpu)
  out=${2:?usage: run.sh report-1gpu OUT_DIR [BEFORE_LABEL=CSV]}
  before=()
  if [ -n "${3:-}" ]; then before=(--before "$3"); fi
  (cd "$root/bench/gpu" && python3 report_1gpu.py "$out/m2n-1gpu.csv" \
    --variant "reduce-share=$out/m2n-share-1gpu.csv" --variant "copy engine=$out/m2n-engine-1gpu.csv" \
    "${before[@]}") | tee "$out/table-1gpu.md" ;;
report)
  out=${2:?usage: run.sh report OUT_DIR}
  variants=(--variant "reduce-share=$out/m2n-share.csv")
  if [ -f "$out/m2n-engine.csv" ]; then
    variants+=(--variant "own copy on the copy engine=$out/m2n-engine.csv")
  fi
  python3 "$root/bench/gpu/report.py" "$out/m2n.csv" "$out/baselines.csv" --svg "$out/collectives.svg" \
    "${variants[@]}" | tee "$out/table.md" ;;
*)
  echo "usage: $0 compile | measure OUT_DIR | measure-m2n|measure-variants|measure-baselines OUT_DIR | report OUT_DIR | measure-1gpu OUT_DIR | report-1gpu OUT_DIR [LABEL=CSV]" >&2; exit 2 ;;
esac
