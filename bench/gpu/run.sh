#!/usr/bin/env bash
# The GPU benchmarks: m2n against its baselines, every row measured in the
# same run the same way (CUDA events around back-to-back launches, and the
# same inside a CUDA graph; artifact_runner.cu and baselines.py say how).
# The GPU machine has no MLIR, so there are two halves:
#   here:          bench/gpu/run.sh compile       (writes .gpu/bench*.m2n, the
#                  CTA sweep .gpu/ctas/*.m2n and the kernel builds
#                  .gpu/engine/*.ptx)
#   GPU machine:   bench/gpu/run.sh measure-1gpu OUT    (one GPU: the engine
#                  microbenchmark, m2n rows on virtual ranks, the CTA sweep
#                  with torch on the whole GPU for the same bytes;
#                  or its parts measure-1gpu-engine, -sweep and -rows, one
#                  10-minute call each)
#                  bench/gpu/run.sh measure-quantizing OUT (one GPU: issue
#                  32's FP8 reshard against its uncast twin)
#                  bench/gpu/run.sh measure OUT         (2+ GPUs; or its parts
#                  measure-m2n, measure-variants, measure-baselines, one
#                  10-minute call each), carrying .gpu
#   here:          bench/gpu/run.sh report OUT / report-1gpu OUT
# A kernel change is measured against the kernel before it: build the older
# commit, `bench/gpu/run.sh engine-ptx before` there, copy its
# .gpu/engine/before-*.ptx here; measure-1gpu runs every build it finds.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sizes=${M2N_BENCH_SIZES:-8K,64K,1M,16M,256M,1G}
# (66 a rank: the whole GPU of 132 SMs for the two virtual ranks, against
# torch on the whole GPU for the same bytes, torch_same_bytes.py.)
cta_counts="1 2 4 8 16 32 66"
case "${1:-}" in
engine-ptx)
  # The kernel of this build, for the engine microbenchmark: the bulk-only
  # kernel the runtime launches for tables without vector items, and the
  # kernel with every op (the SM path).
  name=${2:?usage: run.sh engine-ptx NAME}
  mkdir -p "$root/.gpu/engine"
  # (The ops of its cases: copy, add.f32 and add.bf16 reductions.)
  { python3 "$root/bench/gpu/make_bench_ir.py" --only one_to_one,all_reduce --sizes 1M
    python3 "$root/bench/gpu/make_bench_ir.py" --only all_reduce --sizes 1M | sed -e 's/bf16/f32/g' -e 's/@all_reduce/@all_reduce_f32/'
  } > "$root/.gpu/engine/bulk.mlir"
  "$root/build/bin/m2n-opt" "$root/.gpu/engine/bulk.mlir" "--m2n-pipeline=artifact=$root/.gpu/engine/bulk.m2n" -o /dev/null
  "$root/build/bin/m2n-artifact-dump" "$root/.gpu/engine/bulk.m2n" --ptx | sed -n '/^--- PTX ---$/,$p' | tail -n +2 > "$root/.gpu/engine/$name-bulk.ptx"
  "$root/build/bin/m2n-opt" "$root/examples/example_a.mlir" "--pass-pipeline=builtin.module(m2n-convert-to-gpu{kernel-ops=all},builtin.module(nvvm-attach-target{module=m2n_kernels chip=sm_90a features=+ptx86},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-nvvm-to-llvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa}))" \
    | python3 "$root/test/Utils/extract_ptx.py" - > "$root/.gpu/engine/$name-all.ptx"
  rm -f "$root/.gpu/engine/bulk.mlir" "$root/.gpu/engine/bulk.m2n"
  echo "wrote $root/.gpu/engine/$name-bulk.ptx and $name-all.ptx" ;;
compile)
  mkdir -p "$root/.gpu" "$root/.gpu/ctas"
  "$0" engine-ptx after
  python3 "$root/bench/gpu/make_bench_ir.py" --sizes "$sizes" > "$root/.gpu/bench.mlir"
  # The CTA-budget sweep: the 1-to-1 and the collectives at 1 MiB and
  # 256 MiB, compiled for each CTA budget, every byte in the kernel
  # (copy-engine=false: the rows measure the kernel against the plain SM
  # kernel of the engine microbenchmark at the same CTAs).
  python3 "$root/bench/gpu/make_bench_ir.py" --sizes 1M,256M --only one_to_one,all_gather,reduce_scatter,all_reduce,all_to_all > "$root/.gpu/ctas/sweep.mlir"
  # The reductions again unfused (fuse-reductions=false: a rank copies its
  # own partial, then reduces its peer's onto it), the lowering before the
  # fusion, as a reference row.
  python3 "$root/bench/gpu/make_bench_ir.py" --sizes 256M --only reduce_scatter,all_reduce > "$root/.gpu/ctas/unfused.mlir"
  for n in $cta_counts; do
    "$root/build/bin/m2n-opt" "$root/.gpu/ctas/sweep.mlir" "--m2n-pipeline=artifact=$root/.gpu/ctas/ctas-$n.m2n max-ctas=$n copy-engine=false" -o /dev/null
    "$root/build/bin/m2n-opt" "$root/.gpu/ctas/unfused.mlir" "--m2n-pipeline=artifact=$root/.gpu/ctas/unfused-$n.m2n max-ctas=$n copy-engine=false fuse-reductions=false" -o /dev/null
  done
  "$root/build/bin/m2n-opt" "$root/.gpu/bench.mlir" "--m2n-pipeline=artifact=$root/.gpu/bench.m2n" -o /dev/null
  # The reductions again, routed reduce-scatter + all-gather (reduce-share).
  python3 "$root/bench/gpu/make_bench_ir.py" --sizes "$sizes" --only all_reduce,p_to_r > "$root/.gpu/bench-share.mlir"
  "$root/build/bin/m2n-opt" "$root/.gpu/bench-share.mlir" "--m2n-pipeline=artifact=$root/.gpu/bench-share.m2n reduce-share=true" -o /dev/null
  # Every row again with contiguous source copies of >= 1 MiB (a rank's own
  # and its peers') on the copy engine.
  "$root/build/bin/m2n-opt" "$root/.gpu/bench.mlir" "--m2n-pipeline=artifact=$root/.gpu/bench-engine.m2n copy-engine=true" -o /dev/null
  # ... and with none (copy-engine=false): the default (auto) chooses by
  # cost between the two.
  "$root/build/bin/m2n-opt" "$root/.gpu/bench.mlir" "--m2n-pipeline=artifact=$root/.gpu/bench-sm.m2n copy-engine=false" -o /dev/null
  # Issue 32's quantizing reshard and its uncast twin at each CTA budget
  # whose 16 ranks' kernels all fit one GPU at once (measure-quantizing).
  # With quantize-on-sources as well (the sources' CTAs quantize bands too).
  for n in 4 8; do
    "$root/build/bin/m2n-opt" "$root/bench/gpu/quantizing_bench.mlir" "--m2n-pipeline=artifact=$root/.gpu/quantizing-ctas$n.m2n max-ctas=$n" -o /dev/null
    "$root/build/bin/m2n-opt" "$root/bench/gpu/quantizing_bench.mlir" "--m2n-pipeline=artifact=$root/.gpu/quantizing-ctas$n-on-sources.m2n max-ctas=$n quantize-on-sources=true" -o /dev/null
  done
  echo "wrote $root/.gpu/bench.m2n, bench-share.m2n, bench-engine.m2n, quantizing-ctas{4,8}[-on-sources].m2n and ctas/ctas-{${cta_counts// /,}}.m2n" ;;
measure-quantizing)
  # The quantizing reshard against the same reshard without a cast, at the
  # same CTA budget, on GPU 0 (16 virtual ranks); each quantizing row is
  # checked once (the host reference of 132M elements takes a while) and
  # timed. Then: bench/results by hand (the runner prints the table rows).
  out=${2:?usage: run.sh measure-quantizing OUT_DIR}
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
  "$root/test/GPU/build_runner.sh" /tmp/m2n_quantizing_runner "$root/test/GPU/quantizing_runner.cu"
  export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
  variants="ctas4 ctas8 ctas4-on-sources ctas8-on-sources"
  for v in $variants; do
    timeout 240 /tmp/m2n_quantizing_runner "$root/.gpu/quantizing-$v.m2n" --checks 1 --bench 20 2>&1 | tee "$out/quantizing-$v.log"
  done
  # The table bench/results keeps: both rows of each run, and their ratio.
  {
    echo "| artifact | quantizing us | uncast us | uncast / quantizing |"
    echo "|---|---|---|---|"
    for v in $variants; do
      awk -v v="$v" '/^@quantizing/ { for (i = 1; i <= NF; ++i) if ($i == "us") q = $(i - 1) }
                     /^@uncast/ { for (i = 1; i <= NF; ++i) if ($i == "us") u = $(i - 1) }
                     END { if (q && u) printf "| %s | %s | %s | %.2f |\n", v, q, u, u / q }' \
        "$out/quantizing-$v.log"
    done
  } | tee "$out/quantizing-table.md" ;;
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
  if [ "$1" = measure ] || [ "$1" = measure-m2n ]; then
    for n in $cta_counts; do
      timeout 100 /tmp/m2n_artifact_runner "$root/.gpu/ctas/ctas-$n.m2n" --repeat 10 --checks 1 --csv "$out/m2n-ctas-$n.csv" 2>&1 | tee "$out/m2n-ctas-$n.log"
    done
  fi
  if [ "$1" = measure ] || [ "$1" = measure-baselines ]; then
    # Two ranks, as the m2n rows were compiled (run_multi.sh: 4 and 8).
    gpus=2
    timeout 300 torchrun --nproc-per-node "$gpus" "$root/bench/gpu/baselines.py" "$out/baselines.csv" --repeat 10 --sizes "$sizes" --registered 2>&1 | tee "$out/baselines.log"
    # NCCL at each CTA cap, the collectives of the sweep.
    for n in $cta_counts; do
      NCCL_MIN_CTAS=$n NCCL_MAX_CTAS=$n timeout 120 torchrun --nproc-per-node "$gpus" "$root/bench/gpu/baselines.py" "$out/baselines-ctas-$n.csv" \
        --repeat 10 --sizes 1M,256M --collectives-only --label "NCCL (NCCL_MAX_CTAS=$n)" 2>&1 | tee "$out/baselines-ctas-$n.log"
    done
  fi
  if [ "$1" = measure ]; then
    "$0" report "$out"
  fi ;;
measure-1gpu)
  # The 1-GPU form: every row on GPU 0 (virtual ranks), the default
  # artifact, reduce-share and the copy engine, with cudaMemcpyAsync on the
  # same GPU as the reference of the 1-to-1 rows (no NCCL: it needs one GPU
  # per rank). Then: run.sh report-1gpu OUT here. Its three parts take a
  # device call (10 minutes) each: measure-1gpu-engine, measure-1gpu-sweep,
  # measure-1gpu-rows, in any order into the same OUT.
  out=${2:?usage: run.sh measure-1gpu OUT_DIR}
  for part in engine sweep rows; do "$0" "measure-1gpu-$part" "$out"; done ;;
measure-1gpu-engine|measure-1gpu-sweep|measure-1gpu-rows)
  part=${1#measure-1gpu-}
  out=${2:?usage: run.sh $1 OUT_DIR}
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
  export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
  if [ "$part" = engine ]; then
    # The engine microbenchmark: every kernel build in .gpu/engine (the SM
    # path on the builds with every op) and the plain SM kernel's rows.
    nvcc -O2 -std=c++17 -arch=sm_90 -I"$root/include" -I"$root/test/GPU" "$root/bench/gpu/engine_bench.cu" \
      "$root"/lib/Artifact/*.cpp "$root"/lib/Base/*.cpp -o /tmp/m2n_engine_bench -lcuda
    kernels=()
    for build in "$root"/.gpu/engine/*-bulk.ptx; do
      name=$(basename "$build" -bulk.ptx)
      walkers=$(grep -q "%tid.y" "$build" && echo ":walkers" || true)
      kernels+=(--kernel "$name=$build$walkers" --kernel "$name-all=${build%-bulk.ptx}-all.ptx$walkers:vector")
    done
    timeout 500 /tmp/m2n_engine_bench "${kernels[@]}" --csv "$out/engine.csv" > "$out/engine.log" 2>&1 || echo "engine_bench failed: $?"
    tail -3 "$out/engine.log"
    exit 0
  fi
  "$root/test/GPU/build_runner.sh" /tmp/m2n_artifact_runner
  if [ "$part" = sweep ]; then
    timeout 120 python3 "$root/bench/gpu/torch_same_bytes.py" "$out/torch-same-bytes.csv" --sizes 1M,256M \
      > "$out/torch-same-bytes.log" 2>&1 || echo "torch_same_bytes.py failed: $?"
    for n in $cta_counts; do
      timeout 90 /tmp/m2n_artifact_runner "$root/.gpu/ctas/ctas-$n.m2n" --repeat 10 --checks 1 --refs 0 --csv "$out/m2n-ctas-$n-1gpu.csv" > "$out/m2n-ctas-$n-1gpu.log" 2>&1 \
        || echo "ctas-$n failed: $?"
      tail -1 "$out/m2n-ctas-$n-1gpu.log"
      timeout 60 /tmp/m2n_artifact_runner "$root/.gpu/ctas/unfused-$n.m2n" --repeat 10 --checks 1 --refs 0 --csv "$out/m2n-unfused-$n-1gpu.csv" > "$out/m2n-unfused-$n-1gpu.log" 2>&1 \
        || echo "unfused-$n failed: $?"
    done
    exit 0
  fi
  # The baseline script over one rank (a check of the script, not a baseline).
  timeout 120 torchrun --nproc-per-node 1 "$root/bench/gpu/baselines.py" "$out/baselines-1rank.csv" --repeat 5 \
    --sizes 8K,1M,64M --registered > "$out/baselines-1rank.log" 2>&1 || echo "baselines.py failed: $?"
  for variant in "" -share -engine -sm; do
    timeout 110 /tmp/m2n_artifact_runner "$root/.gpu/bench$variant.m2n" --repeat 10 --checks 1 \
      $([ -n "$variant" ] && echo --refs 0) --csv "$out/m2n$variant-1gpu.csv" > "$out/m2n$variant-1gpu.log" 2>&1 \
      || echo "bench$variant failed: $?"
    tail -1 "$out/m2n$variant-1gpu.log"
  done
  # The rows again with the device's ranks on one stream, as m2n-run and the
  # Python frontend launch them (one kernel launch for both ranks), and the
  # launch floor small messages are bound by (bench/gpu/launch_probe.cu).
  timeout 110 /tmp/m2n_artifact_runner "$root/.gpu/bench.m2n" --repeat 10 --checks 1 --refs 0 \
    --stream-per-device --csv "$out/m2n-shared-1gpu.csv" > "$out/m2n-shared-1gpu.log" 2>&1 \
    || echo "bench (one stream) failed: $?"
  nvcc -O2 -arch=sm_90a -o /tmp/m2n_launch_probe "$root/bench/gpu/launch_probe.cu" \
    && timeout 60 /tmp/m2n_launch_probe 3000 | tee "$out/launch-probe.txt" ;;
report-1gpu)
  out=${2:?usage: run.sh report-1gpu OUT_DIR}
  sweep=()
  for n in $cta_counts; do
    [ -f "$out/m2n-ctas-$n-1gpu.csv" ] && sweep+=(--sweep "$n=$out/m2n-ctas-$n-1gpu.csv")
    [ -f "$out/m2n-unfused-$n-1gpu.csv" ] && sweep+=(--sweep "unfused:$n=$out/m2n-unfused-$n-1gpu.csv")
  done
  [ -f "$out/torch-same-bytes.csv" ] && sweep+=(--baseline-sweep "66=$out/torch-same-bytes.csv")
  python3 "$root/bench/gpu/report.py" "$out/m2n-1gpu.csv" \
    --variant "reduce-share=$out/m2n-share-1gpu.csv" --variant "copy engine=$out/m2n-engine-1gpu.csv" \
    --variant "no copy engine=$out/m2n-sm-1gpu.csv" \
    "${sweep[@]}" $([ -f "$out/engine.csv" ] && echo --plain "$out/engine.csv") \
    --svg "$out/m2n-1gpu" --title "m2n on 1 GPU, 2 virtual ranks" | tee "$out/table-1gpu.md"
  python3 "$root/bench/gpu/report_engine.py" "$out/engine.csv" --svg "$out/engine" | tee "$out/engine.md" ;;
report)
  out=${2:?usage: run.sh report OUT_DIR}
  variants=(--variant "reduce-share=$out/m2n-share.csv")
  if [ -f "$out/m2n-engine.csv" ]; then
    variants+=(--variant "own copy on the copy engine=$out/m2n-engine.csv")
  fi
  sweep=()
  for n in $cta_counts; do
    [ -f "$out/m2n-ctas-$n.csv" ] && sweep+=(--sweep "$n=$out/m2n-ctas-$n.csv")
    [ -f "$out/baselines-ctas-$n.csv" ] && sweep+=(--baseline-sweep "$n=$out/baselines-ctas-$n.csv")
  done
  gpus=2 # the rows' ranks (compile: make_bench_ir.py's default)
  python3 "$root/bench/gpu/report.py" "$out/m2n.csv" "$out/baselines.csv" --svg "$out/collectives" \
    "${variants[@]}" "${sweep[@]}" --ranks "$gpus" --title "${gpus}x H200: m2n vs NCCL" | tee "$out/table.md" ;;
*)
  echo "usage: $0 compile | engine-ptx NAME | measure OUT_DIR | measure-m2n|measure-variants|measure-baselines OUT_DIR | report OUT_DIR | measure-1gpu OUT_DIR | report-1gpu OUT_DIR" >&2; exit 2 ;;
esac
