// m2n-write-artifact explains what it cannot write.
//
// RUN: not m2n-opt %s --m2n-write-artifact -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPATH
// RUN: not m2n-opt %s "--m2n-write-artifact=path=%t.m2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOLAUNCH
// Programs lowered with the SM path below 64 bytes, and a kernel for them.
// RUN: m2n-opt %s "--pass-pipeline=builtin.module(m2n-expand-collectives,m2n-plan-intersections,m2n-route-topology,m2n-lower-schedule{tile-below-run-bytes=0 vector-below-bytes=64},m2n-convert-to-gpu,m2n-choose-launch,builtin.module(nvvm-attach-target{module=m2n_kernels chip=sm_90a features=+ptx86},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-nvvm-to-llvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa}))" -o %t.mlir
// RUN: m2n-opt %t.mlir "--m2n-write-artifact=path=%t.m2n" -o /dev/null
// Without the kernel's binary:
// RUN: sed -e 's/gpu.binary @m2n_kernels/gpu.binary @other_kernels/' %t.mlir > %t.nobinary.mlir
// RUN: not m2n-opt %t.nobinary.mlir "--m2n-write-artifact=path=%t.m2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBINARY
// A kernel that lacks the bulk copies its programs need (its op codes
// edited).
// RUN: sed -e 's/bulk = array<i32: [0-9, ]*>/bulk = array<i32>/' %t.mlir > %t.nobulk.mlir
// RUN: not m2n-opt %t.nobulk.mlir "--m2n-write-artifact=path=%t.m2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// Without the SM path, the launches of the vector items do not verify
// (the kernel's launch edited to match the op codes).
// RUN: sed -e 's/vector = array<i32: [0-9, ]*>/vector = array<i32>/' -e 's/threads = 128, stages/threads = 32, stages/' %t.mlir > %t.novector.mlir
// RUN: not m2n-opt %t.novector.mlir "--m2n-write-artifact=path=%t.m2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOVECTOR

// NOPATH: error: m2n-write-artifact needs a path
// NOLAUNCH: error: no m2n.kernel_launch: run m2n-choose-launch first (the launch is the compiler's)
// NOBINARY: error: no gpu.binary @m2n_kernel::@m2n_kernels: run m2n-convert-to-gpu and gpu-module-to-binary first
// MISSING: error: the transfer kernel cannot run @rows#0's item rank 0: copy src(0)+0 -> src(0)+0 0B wait 0:0>=4: run m2n-convert-to-gpu on the lowered programs (or with kernel-ops=all)
// NOVECTOR: error: 'm2n.rank' op launch 1 walker x 128 threads, stages of 65536 B: the kernel has no SM path, its blocks are 32 threads

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
