// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=gather-bcast topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-stage-network-steps --m2n-order-steps | FileCheck %s
// Lowered without it, a schedule with network steps is refused by name.
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=gather-bcast topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-stage-network-steps --m2n-lower-schedule 2>&1 | FileCheck %s --check-prefix=UNORDERED
// UNORDERED: error: cannot lower the schedule to per-rank programs: step 2 (max scratch4(0) [0:16] -> scratch0(0) [0:16] via local after [0, 1]) is not where the emission order puts it: number the steps first (m2n-order-steps)
// Schedules without network steps keep their numbering.
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology > %t.local.mlir
// RUN: m2n-opt %t.local.mlir --m2n-order-steps | diff %t.local.mlir -

// The gather-bcast max of stage-network-steps.mlir, numbered in emission
// order: a rank's own work before what waits for its peers', each copy out
// of the root's scratch right before the forwarding that follows it, the
// dependencies renumbered with the steps.
// CHECK-LABEL: func.func @max4
// CHECK: m2n.step 0 copy src(0) [0:16] -> scratch0(0) [0:16] via local
// CHECK-NEXT: m2n.step 1 copy src(1) [0:16] -> scratch4(0) [0:16] via network
// CHECK-NEXT: m2n.step 2 reduce<max> src(2) [0:16] -> scratch0(0) [0:16] via nvlink after [0]
// CHECK-NEXT: m2n.step 3 reduce<max> scratch4(0) [0:16] -> scratch0(0) [0:16] via local after [0, 1]
// CHECK-NEXT: m2n.step 4 copy src(3) [0:16] -> scratch5(0) [0:16] via network
// CHECK-NEXT: m2n.step 5 reduce<max> scratch5(0) [0:16] -> scratch0(0) [0:16] via local after [0, 4]
// CHECK-NEXT: m2n.step 6 copy scratch0(0) [0:16] -> dst(0) [0:16] via local after [0, 3, 2, 5]
// CHECK-NEXT: m2n.step 7 copy scratch0(0) [0:16] -> scratch1(2) [0:16] via nvlink after [0, 3, 2, 5]
// CHECK-NEXT: m2n.step 8 copy scratch1(2) [0:16] -> dst(2) [0:16] via local after [7]
// CHECK-NEXT: m2n.step 9 copy scratch1(2) [0:16] -> scratch2(1) [0:16] via network after [7]
// CHECK-NEXT: m2n.step 10 copy scratch2(1) [0:16] -> dst(1) [0:16] via local after [9]
// CHECK-NEXT: m2n.step 11 copy scratch2(1) [0:16] -> scratch3(3) [0:16] via nvlink after [9]
// CHECK-NEXT: m2n.step 12 copy scratch3(3) [0:16] -> dst(3) [0:16] via local after [11]
func.func @max4(%c: !m2n.comm<4>, %x: !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>>) -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>> -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return %0 : !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
}
