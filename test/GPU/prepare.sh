#!/usr/bin/env bash
# Here (with the m2n build): writes everything the GPU machine runs into
# .gpu/ (carry it): the kernel's PTX for the kernel driver, the test
# matrix, the network-step cases, and the benchmark's artifacts.
#   test/GPU/prepare.sh            then, on the GPU machine:
#   test/GPU/run.sh .gpu OUT       and  bench/gpu/run.sh measure OUT
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
opt="$root/build/bin/m2n-opt"
mkdir -p "$root/.gpu"
# The kernel driver's hand-built tables use every op: the kernel with all.
"$opt" "$root/examples/example_a.mlir" "--pass-pipeline=builtin.module(m2n-convert-to-gpu{kernel-ops=all},builtin.module(nvvm-attach-target{module=m2n_kernels chip=sm_90a features=+ptx86},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-nvvm-to-llvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa}))" \
  | python3 "$root/test/Utils/extract_ptx.py" - > "$root/.gpu/m2n_transfer.ptx"
# The random matrix of small odd reshards (also run on the host in CI), with
# the default lowering and with the SM path below 256 bytes.
python3 "$root/test/GPU/random_matrix.py" --cases 240 > "$root/.gpu/random.mlir"
"$opt" "$root/.gpu/random.mlir" "--m2n-pipeline=artifact=$root/.gpu/random.m2n" -o /dev/null
# Both with every reduction fused with its rank's copy of its own partial
# (fuse-reductions=true: the accumulator read on the SM path).
"$opt" "$root/.gpu/random.mlir" "--m2n-pipeline=artifact=$root/.gpu/random-vector.m2n vector-below-bytes=256 fuse-reductions=true" -o /dev/null
# ... and for buffers that are only 8-byte aligned (the runner offsets them).
"$opt" "$root/.gpu/random.mlir" "--m2n-pipeline=artifact=$root/.gpu/random-align8.m2n buffer-align=8 fuse-reductions=true" -o /dev/null
"$opt" "$root/test/GPU/reshards.mlir" "--m2n-pipeline=artifact=$root/.gpu/reshards.m2n" -o /dev/null
# NVIDIA nccl_m2n's correctness matrix at a world of 8 (201 cases).
python3 "$root/test/GPU/nccl_m2n_matrix.py" --world 8 > "$root/.gpu/nccl-m2n.mlir"
"$opt" "$root/.gpu/nccl-m2n.mlir" "--m2n-pipeline=artifact=$root/.gpu/nccl-m2n.m2n" -o /dev/null
# The same matrices with every contiguous source copy, a rank's own and its
# peers', on the copy engine (engine-min-bytes=0: whatever the size).
"$opt" "$root/test/GPU/reshards.mlir" "--m2n-pipeline=artifact=$root/.gpu/reshards-engine.m2n copy-engine=true engine-min-bytes=0" -o /dev/null
"$opt" "$root/.gpu/random.mlir" "--m2n-pipeline=artifact=$root/.gpu/random-engine.m2n copy-engine=true engine-min-bytes=0" -o /dev/null
"$opt" "$root/test/GPU/network.mlir" \
  "--m2n-pipeline=artifact=$root/.gpu/network.m2n topology=$root/test/GPU/split-by-gpu.json" -o /dev/null
# gather-bcast reduces across the domains: network copies into staging, then
# reductions from there.
"$opt" "$root/test/GPU/network.mlir" \
  "--m2n-pipeline=artifact=$root/.gpu/network-bcast.m2n strategy=gather-bcast topology=$root/test/GPU/split-by-gpu.json" -o /dev/null
# A compiled group (m2n.group): a small Qwen3-32B refit, all 707 tensors one
# merged program per rank on 12 ranks, which artifact_runner --group
# launches as compiled (its member list is the group's).
"$root/build/bin/m2n-refit" "$root/examples/refit/qwen3-32b.json" --trainer tp=4,pp=2 \
  --generator tp=2,dp=2 --shrink 16 --strategy hierarchical --emit-mlir "$root/.gpu/refit.mlir" > /dev/null
"$opt" "$root/.gpu/refit.mlir" "--m2n-pipeline=artifact=$root/.gpu/refit-group.m2n chunk-bytes=0" -o /dev/null
rm "$root/.gpu/refit.mlir"
# Quantizing reshards (docs/fp8-scaling.md), checked by quantizing_runner.
"$opt" "$root/test/GPU/quantizing.mlir" "--m2n-pipeline=artifact=$root/.gpu/quantizing.m2n" -o /dev/null
# More ranks of one process on one GPU than it runs kernels at once: refused.
"$opt" "$root/test/GPU/many-ranks.mlir" "--m2n-pipeline=artifact=$root/.gpu/many-ranks.m2n max-ctas=1" -o /dev/null
# 256 ranks: one launch where they share a stream, refused where they do not.
"$opt" "$root/test/GPU/256-ranks.mlir" "--m2n-pipeline=artifact=$root/.gpu/256-ranks.m2n max-ctas=1 stage-bytes=16384" -o /dev/null
# More CTAs waiting for each other than one GPU holds at once: refused.
"$opt" "$root/test/GPU/too-many-ctas.mlir" "--m2n-pipeline=artifact=$root/.gpu/too-many-ctas.m2n max-ctas=132" -o /dev/null
# ... with 72 KB stages (the quantizing loop's deep ring at 256 threads) and
# 20 KB ones (too small for a ring: the slow path).
"$opt" "$root/test/GPU/quantizing.mlir" "--m2n-pipeline=artifact=$root/.gpu/quantizing-stage72k.m2n stage-bytes=73728" -o /dev/null
"$opt" "$root/test/GPU/quantizing.mlir" "--m2n-pipeline=artifact=$root/.gpu/quantizing-stage20k.m2n stage-bytes=20480" -o /dev/null
# ... and cut into bands of block rows (chunk-bytes=256 scale-bands=8: each
# band's data waits for that band's amaxes only).
"$opt" "$root/test/GPU/quantizing.mlir" "--m2n-pipeline=artifact=$root/.gpu/quantizing-bands.m2n chunk-bytes=256 scale-bands=8" -o /dev/null
# ... and with the source ranks quantizing bands into scratches
# (quantize-on-sources, docs/routing.md).
"$opt" "$root/test/GPU/quantizing.mlir" "--m2n-pipeline=artifact=$root/.gpu/quantizing-on-sources.m2n quantize-on-sources=true" -o /dev/null
"$root/bench/gpu/run.sh" compile
du -sh "$root/.gpu"
