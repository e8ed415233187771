// Unfused (fuse-reductions=false: each rank copies its own partial, then
// reduces its peers' onto it):
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology=strategy=flat "--m2n-order-reductions=fuse-reductions=false" | FileCheck %s
// The lowering's options decide which reductions take the SM path: with
// buffers promised only 4-byte alignment no TMA move touches them, so the
// aligned sum is ordered too.
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology=strategy=flat "--m2n-order-reductions=buffer-align=4 fuse-reductions=false" | FileCheck %s --check-prefix=ALIGN4
// Lowered without it, a vector reduction that overlaps an unordered one is
// refused by name.
// RUN: not m2n-opt %s --m2n-plan-intersections --m2n-route-topology=strategy=flat "--m2n-lower-schedule=fuse-reductions=false" 2>&1 | FileCheck %s --check-prefix=UNORDERED
// UNORDERED: error: cannot lower the schedule to per-rank programs: step 2 (sum src(2) [0:3] -> dst(0) [0:3] via nvlink after [0]) and step 1 (sum src(1) [0:3] -> dst(0) [0:3] via nvlink after [0]) reduce onto the same bytes, one on the SM path (load, combine, store: not atomic), and neither waits for the other: order the reductions first (m2n-order-reductions)
// The ordered schedule lowers as printed, and the values hold.
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology=strategy=flat "--m2n-order-reductions=fuse-reductions=false" "--m2n-lower-schedule=fuse-reductions=false" --m2n-verify-program | FileCheck %s --check-prefix=LOWERED
// Fused (fuse-reductions=true), the first reduction onto a rank's bytes reads its
// own partial as its accumulator and is a vector reduction: the second, a
// TMA one, waits for it.
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology=strategy=flat "--m2n-order-reductions=fuse-reductions=true" "--m2n-lower-schedule=fuse-reductions=true" --m2n-verify-program | FileCheck %s --check-prefix=FUSED
// RUN: m2n-run %s --pipeline=strategy=flat | FileCheck %s --check-prefix=RESULT
// RUN: m2n-run %s "--pipeline=strategy=flat fuse-reductions=true" | FileCheck %s --check-prefix=RESULT
// RUN: m2n-run %s "--pipeline=strategy=flat buffer-align=4" | FileCheck %s --check-prefix=RESULT
// A bad option is refused by name.
// RUN: not m2n-opt %s "--m2n-order-reductions=buffer-align=3" 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: m2n-order-reductions: buffer-align: the buffer alignment 3 is not a power of two of at most 4096 bytes

// A sum of 12-byte rows: not a multiple of TMA's 16 bytes, so every
// reduction moves on the SM path, and each rank's second reduction waits
// for its first.
// CHECK-LABEL: func.func @sum3
// CHECK: m2n.step 1 reduce<sum> src(1) [0:3] -> dst(0) [0:3] via nvlink after [0]
// CHECK-NEXT: m2n.step 2 reduce<sum> src(2) [0:3] -> dst(0) [0:3] via nvlink after [0, 1]
// CHECK: m2n.step 5 reduce<sum> src(2) [0:3] -> dst(1) [0:3] via nvlink after [3, 4]
// CHECK: m2n.step 8 reduce<sum> src(1) [0:3] -> dst(2) [0:3] via nvlink after [6, 7]
// LOWERED-LABEL: func.func @sum3
// LOWERED: m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 12B signal 0:1
// LOWERED-NEXT: m2n.move vector reduce<sum> src(2)+0 -> dst(0)+0 12B {{.*}}wait 0:1>=1
func.func @sum3(%c: !m2n.comm<3>, %x: !m2n.dist<3xf32, #m2n.layout<#m2n.mesh<[3]>, [partial<sum>]>>) -> !m2n.dist<3xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<3>, !m2n.dist<3xf32, #m2n.layout<#m2n.mesh<[3]>, [partial<sum>]>> -> !m2n.dist<3xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
  return %0 : !m2n.dist<3xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
}

// 64-byte rows of f32 sums: TMA bulk reductions, atomic per element, so
// the reductions onto one destination stay unordered (and run at once).
// CHECK-LABEL: func.func @sum16
// CHECK: m2n.step 1 reduce<sum> src(1) [0:16] -> dst(0) [0:16] via nvlink after [0]
// CHECK-NEXT: m2n.step 2 reduce<sum> src(2) [0:16] -> dst(0) [0:16] via nvlink after [0]{{$}}
// ALIGN4-LABEL: func.func @sum16
// ALIGN4: m2n.step 2 reduce<sum> src(2) [0:16] -> dst(0) [0:16] via nvlink after [0, 1]
// LOWERED-LABEL: func.func @sum16
// LOWERED: m2n.move bulk reduce<sum> src(1)+0 -> dst(0)+0 64B
// LOWERED-NEXT: m2n.move bulk reduce<sum> src(2)+0 -> dst(0)+0 64B
// FUSED-LABEL: func.func @sum16
// FUSED: m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B acc src(0) signal 0:0 read_done 1:1 step 1
// FUSED-NEXT: m2n.move bulk reduce<sum> src(2)+0 -> dst(0)+0 64B wait 0:0>=1 read_done 2:1 step 2
func.func @sum16(%c: !m2n.comm<3>, %x: !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[3]>, [partial<sum>]>>) -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<3>, !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[3]>, [partial<sum>]>> -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
  return %0 : !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
}
// RESULT: 2 passed, 0 failed
