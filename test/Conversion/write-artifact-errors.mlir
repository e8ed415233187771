// m2n-write-artifact explains what it cannot write.
//
// RUN: not m2n-opt %s --m2n-write-artifact -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPATH
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBINARY
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n stages=9" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n tile-below-run-bytes=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not m2n-opt %s "--m2n-pipeline=artifact=%t.m2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNALIGNED

// NOPATH: error: m2n-write-artifact needs a path
// NOBINARY: error: no gpu.binary @m2n_kernels: run m2n-convert-to-gpu and gpu-module-to-binary first
// STAGES: error: m2n-write-artifact: stages must be 1-8, stage-bytes a positive multiple of 16, max-ctas positive and tile-below-run-bytes not negative
// 3 bf16 elements per rank: 6-byte runs fit neither TMA bulk copies nor tiles.
// UNALIGNED: error: cannot lower the schedule to kernel work items: step 0 (copy src(0) [0:3] -> dst(0) [0:3] via local): a run of 6 bytes at element offsets 0 -> 0 is not 16-byte aligned and it cannot move as tiles either: its rows of 6 bytes are not a multiple of 16

func.func @odd(%c: !m2n.comm<2>, %x: !m2n.dist<6xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<6xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<6xbf16, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
