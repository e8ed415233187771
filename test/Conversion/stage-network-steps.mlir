// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=gather-bcast topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-stage-network-steps | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=flat topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-stage-network-steps | FileCheck %s --check-prefix=FLAT
// Schedules without network steps are left as they are.
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology > %t.local.mlir
// RUN: m2n-opt %t.local.mlir --m2n-stage-network-steps | diff %t.local.mlir -

// A max over four ranks gathered to rank 0 (two domains: even and odd
// ranks). NCCL receives only copy: the contributions of ranks 1 and 3 land
// in staging on rank 0 (scratch 4 and 5) and are reduced from there, after
// their receive.
// CHECK-LABEL: func.func @max4
// CHECK: m2n.scratch 4 on 0 [16]
// CHECK-NEXT: m2n.scratch 5 on 0 [16]
// CHECK-NEXT: m2n.step 0 copy src(0) [0:16] -> scratch0(0) [0:16] via local
// CHECK-NEXT: m2n.step 1 copy src(1) [0:16] -> scratch4(0) [0:16] via network
// CHECK-NEXT: m2n.step 2 reduce<max> scratch4(0) [0:16] -> scratch0(0) [0:16] via local after [0, 1]
// CHECK-NEXT: m2n.step 3 reduce<max> src(2) [0:16] -> scratch0(0) [0:16] via nvlink after [0]
// CHECK-NEXT: m2n.step 4 copy src(3) [0:16] -> scratch5(0) [0:16] via network
// CHECK-NEXT: m2n.step 5 reduce<max> scratch5(0) [0:16] -> scratch0(0) [0:16] via local after [0, 4]
// CHECK-NEXT: m2n.step 6 copy scratch0(0) [0:16] -> scratch1(2) [0:16] via nvlink after [0, 2, 3, 5]
// CHECK-NEXT: m2n.step 7 copy scratch1(2) [0:16] -> scratch2(1) [0:16] via network after [6]
func.func @max4(%c: !m2n.comm<4>, %x: !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>>) -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>> -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return %0 : !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
}

// Boxes strided in their source buffer (column halves of rows split over
// ranks 0 and 1, sent flat to the other domain) are packed on the sender
// first, then sent whole.
// FLAT-LABEL: func.func @columns
// FLAT: m2n.scratch 0 on 1 [2, 2]
// FLAT-NEXT: m2n.scratch 1 on 0 [2, 2]
// FLAT-NEXT: m2n.step 0 copy src(0) [0:2, 0:2] -> dst(2) [0:2, 0:2] via nvlink
// FLAT-NEXT: m2n.step 1 copy src(1) [0:2, 0:2] -> scratch0(1) [0:2, 0:2] via local
// FLAT-NEXT: m2n.step 2 copy scratch0(1) [0:2, 0:2] -> dst(2) [2:4, 0:2] via network after [1]
// FLAT-NEXT: m2n.step 3 copy src(0) [0:2, 2:4] -> scratch1(0) [0:2, 0:2] via local
// FLAT-NEXT: m2n.step 4 copy scratch1(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via network after [3]
// FLAT-NEXT: m2n.step 5 copy src(1) [0:2, 2:4] -> dst(3) [2:4, 0:2] via nvlink
func.func @columns(%c: !m2n.comm<4>, %x: !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) -> !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>>
  return %0 : !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>>
}
