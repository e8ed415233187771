#!/usr/bin/env bash
# The multi-GPU benchmark of issue 8 (4 and 8 GPUs of one host), in three
# steps, because the GPU machine has no MLIR:
#   here:          bench/gpu/run_multi.sh compile           (writes .gpu-multi/)
#   GPU machine:   bench/gpu/run_multi.sh measure OUT       (carry .gpu-multi;
#                  uses every visible GPU: 4 or 8; with 2, only the routing
#                  comparison on virtual ranks)
#   here:          bench/gpu/run_multi.sh report OUT        (numpy-free)
# The GPU test matrix on the same machine is test/GPU/run.sh (rank r on GPU
# r % G, in one process and with one process per GPU).
#
# measure: collectives over G ranks (one per GPU) against NCCL with its
# defaults and with NCCL_MAX_CTAS=8, all_reduce also with reduce-share=off,
# all of them also with copy-engine=true;
# with 8 GPUs, the routing comparison on examples/topologies/h200-1x8-split4.json
# (two domains of four GPUs; network steps through NCCL): flat,
# gather-bcast and hierarchical, next to the estimator's T_SOL.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir="$root/.gpu-multi"
opt="$root/build/bin/m2n-opt"
split="$root/examples/topologies/h200-1x8-split4.json"
case "${1:-}" in
compile)
  mkdir -p "$dir"
  for g in 4 8; do
    python3 "$root/bench/gpu/make_bench_ir.py" --ranks "$g" > "$dir/collectives$g.mlir"
    "$opt" "$dir/collectives$g.mlir" "--m2n-pipeline=artifact=$dir/collectives$g.m2n" -o /dev/null
    python3 "$root/bench/gpu/make_bench_ir.py" --ranks "$g" --only all_reduce > "$dir/all-reduce-direct$g.mlir"
    "$opt" "$dir/all-reduce-direct$g.mlir" \
      "--m2n-pipeline=artifact=$dir/all-reduce-direct$g.m2n reduce-share=off" -o /dev/null
    "$opt" "$dir/collectives$g.mlir" "--m2n-pipeline=artifact=$dir/collectives-engine$g.m2n copy-engine=true" -o /dev/null
  done
  (cd "$root/bench/gpu" && python3 make_routing_ir.py) > "$dir/routing.mlir"
  for s in flat gather-bcast hierarchical; do
    "$opt" "$dir/routing.mlir" "--m2n-pipeline=artifact=$dir/routing-$s.m2n strategy=$s topology=$split" -o /dev/null
  done
  "$opt" "$dir/routing.mlir" --m2n-plan-intersections \
    "--m2n-estimate=topology=$split format=json" -o /dev/null > "$dir/routing-estimate.json"
  # Work-item tables of 8 ranks x 1 GiB are large and repetitive: xz makes
  # them small enough to carry (261 MiB -> about 3 MiB).
  xz -T0 -6 -f "$dir"/*.m2n
  du -sh "$dir" ;;
measure)
  out=${2:?usage: run_multi.sh measure OUT_DIR}
  mkdir -p "$out"
  export NCCL_NVLS_ENABLE=0
  gpus=$(nvidia-smi -L | wc -l)
  echo "$gpus" > "$out/gpu-count.txt"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
  if [ "$gpus" != 2 ] && [ "$gpus" != 4 ] && [ "$gpus" != 8 ]; then
    echo "run_multi.sh: needs 2 (routing only, virtual ranks), 4 or 8 GPUs; this machine has $gpus" >&2; exit 2
  fi
  nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null || true)
  export LD_LIBRARY_PATH=${nccl:+$nccl:}${LD_LIBRARY_PATH:-}
  "$root/test/GPU/build_runner.sh" /tmp/m2n_artifact_runner
  work=$(mktemp -d)
  for f in "$dir"/*.m2n.xz; do
    python3 -c "import lzma, sys, shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
      "$f" "$work/$(basename "$f" .xz)"
  done
  dir=$work
  run() { timeout "$1" /tmp/m2n_artifact_runner "$2" --repeat 10 --checks 1 --csv "$3" 2>&1 | tee "$4"; }
  if [ "$gpus" = 2 ]; then
    # Two GPUs: only the routing comparison, on 8 virtual ranks (rank r on
    # GPU r % 2, so each "domain" spans both GPUs): what the lent kinds allow.
    for s in flat gather-bcast hierarchical; do
      run 150 "$dir/routing-$s.m2n" "$out/routing-$s.csv" "$out/routing-$s.log"
    done
    exit 0
  fi
  run 300 "$dir/collectives$gpus.m2n" "$out/m2n.csv" "$out/m2n.log"
  run 150 "$dir/all-reduce-direct$gpus.m2n" "$out/m2n-direct.csv" "$out/m2n-direct.log"
  run 300 "$dir/collectives-engine$gpus.m2n" "$out/m2n-engine.csv" "$out/m2n-engine.log"
  if [ "$gpus" = 8 ]; then
    for s in flat gather-bcast hierarchical; do
      run 150 "$dir/routing-$s.m2n" "$out/routing-$s.csv" "$out/routing-$s.log"
    done
  fi
  base="$root/bench/gpu/baselines.py"
  timeout 200 torchrun --nproc-per-node "$gpus" "$base" "$out/nccl.csv" --repeat 10 \
    --collectives-only 2>&1 | tee "$out/nccl.log"
  NCCL_MAX_CTAS=8 timeout 200 torchrun --nproc-per-node "$gpus" "$base" "$out/nccl-8ctas.csv" \
    --repeat 10 --collectives-only --label "NCCL (NCCL_MAX_CTAS=8)" 2>&1 | tee "$out/nccl-8ctas.log" ;;
report)
  out=${2:?usage: run_multi.sh report OUT_DIR}
  gpus=$(cat "$out/gpu-count.txt")
  if [ -f "$out/nccl.csv" ]; then
    { cat "$out/nccl.csv"; tail -n +2 "$out/nccl-8ctas.csv"; } > "$out/baselines.csv"
    python3 "$root/bench/gpu/report.py" "$out/m2n.csv" "$out/baselines.csv" \
      --variant "direct, no reduce-share=$out/m2n-direct.csv" \
      --variant "own copy on the copy engine=$out/m2n-engine.csv" --svg "$out/collectives" \
      --ranks "$gpus" --title "Collectives on ${gpus}x H200: m2n vs NCCL" | tee "$out/table.md"
  fi
  if [ -f "$out/routing-flat.csv" ]; then
    python3 "$root/bench/gpu/report_routing.py" "$dir/routing-estimate.json" \
      "flat=$out/routing-flat.csv" "gather-bcast=$out/routing-gather-bcast.csv" \
      "hierarchical=$out/routing-hierarchical.csv" | tee "$out/routing.md"
  fi ;;
*)
  echo "usage: $0 compile | measure OUT_DIR | report OUT_DIR" >&2; exit 2 ;;
esac
