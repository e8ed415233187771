// m2n-write-artifact explains what it cannot write.
//
// RUN: not m2n-opt %s --m2n-write-artifact -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPATH
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBINARY
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n stages=9" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n walkers=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n walkers=9" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n stages=4 stage-bytes=65536" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHARED
// Programs lowered with the SM path below 64 bytes, and a kernel for them.
// RUN: m2n-opt %s "--pass-pipeline=builtin.module(m2n-expand-collectives,m2n-plan-intersections,m2n-route-topology,m2n-lower-schedule{tile-below-run-bytes=0 vector-below-bytes=64},m2n-convert-to-gpu,nvvm-attach-target{module=m2n_kernels chip=sm_90a features=+ptx86},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-nvvm-to-llvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})" -o %t.mlir
// RUN: m2n-opt %t.mlir "--m2n-write-artifact=path=%t.m2n" -o /dev/null
// A kernel that lacks the SM path its programs need (its op codes edited).
// RUN: sed -e 's/vector = array<i32: [0-9, ]*>/vector = array<i32>/' %t.mlir > %t.novector.mlir
// RUN: not m2n-opt %t.novector.mlir "--m2n-write-artifact=path=%t.m2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// Moves larger than the kernel's stages.
// RUN: not m2n-opt %t.mlir "--m2n-write-artifact=path=%t.m2n stage-bytes=64" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGEBYTES

// NOPATH: error: m2n-write-artifact needs a path
// NOBINARY: error: no gpu.binary @m2n_kernels: run m2n-convert-to-gpu and gpu-module-to-binary first
// STAGES: error: m2n-write-artifact: stages must be 1-8, stage-bytes a positive multiple of 16, max-ctas positive and walkers 1-8
// SHARED: error: m2n-write-artifact: stages x stage-bytes (each rounded up to 128) is 262144 bytes of shared memory, more than the 231936 a CTA may use
// MISSING: error: the transfer kernel cannot run @rows#0's item rank 0: copy vector src(0)+0 -> dst(0)+0 16B times 4 by (+16,+32): run m2n-convert-to-gpu on the lowered programs (or with kernel-ops=all)
// STAGEBYTES: error: the transfer kernel cannot run @long#1's move {{.*}} of 128 bytes through stages of 64: lower with m2n-lower-schedule{stage-bytes=64}

// 16 bytes per rank and row: short runs, which moved as tiles.
func.func @rows(%c: !m2n.comm<2>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

// 128 bytes per rank: one run.
func.func @long(%c: !m2n.comm<2>, %x: !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
