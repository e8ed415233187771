// RUN: m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections "--m2n-route-topology=reduce-share=true chunk-bytes=0" --mlir-print-local-scope | FileCheck %s
// RUN: m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections "--m2n-route-topology=reduce-share=off chunk-bytes=0" --mlir-print-local-scope | FileCheck %s --check-prefix=DIRECT
// RUN: m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections "--m2n-route-topology=chunk-bytes=0" --mlir-print-local-scope | FileCheck %s
// RUN: not m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections "--m2n-route-topology=reduce-share=maybe" 2>&1 | FileCheck %s --check-prefix=BADMODE
// RUN: m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-estimate -o /dev/null | FileCheck %s --check-prefix=ESTIMATE
// RUN: m2n-sim %s --route hierarchical --reduce-share=on --chunk-bytes 16 | FileCheck %s --check-prefix=SIM

// reduce-share: an all-reduce over 4 ranks of one NVLink domain becomes a
// reduce-scatter (rank r combines every contribution to rows [2r, 2r+2))
// and an all-gather (the other ranks copy those rows from rank r).
// CHECK:      m2n.step 0 copy src(0) [0:2, 0:4] -> dst(0) [0:2, 0:4] via local
// CHECK-NEXT: m2n.step 1 reduce<sum> src(1) [0:2, 0:4] -> dst(0) [0:2, 0:4] via nvlink after [0]
// CHECK-NEXT: m2n.step 2 reduce<sum> src(2) [0:2, 0:4] -> dst(0) [0:2, 0:4] via nvlink after [0]
// CHECK-NEXT: m2n.step 3 reduce<sum> src(3) [0:2, 0:4] -> dst(0) [0:2, 0:4] via nvlink after [0]
// CHECK-NEXT: m2n.step 4 copy dst(0) [0:2, 0:4] -> dst(1) [0:2, 0:4] via nvlink after [0, 1, 2, 3]
// CHECK-NEXT: m2n.step 5 copy dst(0) [0:2, 0:4] -> dst(2) [0:2, 0:4] via nvlink after [0, 1, 2, 3]
// CHECK-NEXT: m2n.step 6 copy dst(0) [0:2, 0:4] -> dst(3) [0:2, 0:4] via nvlink after [0, 1, 2, 3]
// CHECK-NEXT: m2n.step 7 copy src(1) [2:4, 0:4] -> dst(1) [2:4, 0:4] via local
// CHECK:      m2n.step 27 copy dst(3) [6:8, 0:4] -> dst(2) [6:8, 0:4] via nvlink

// reduce-share=auto (the default) takes it too: the cost model finds half the
// NVLink bytes. Without it, every rank reduces the whole tensor of every peer.
// BADMODE: error: unknown reduce-share mode 'maybe'; expected on, off or auto
// DIRECT:     m2n.step 1 reduce<sum> src(0) [0:8, 0:4] -> dst(1) [0:8, 0:4] via nvlink

// The reference executor runs the reduce-share schedule (chunked too); the
// router and lowering property tests run reduce-share on random layouts.
// SIM: m2n-sim: PASS

func.func @all_reduce_4(%c: !m2n.comm<4>, %x: !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// The estimator prices both routes: a 16 MiB all-reduce over 4 ranks moves
// 201 MB over NVLink directly, 101 MB with reduce-share.
// ESTIMATE-LABEL: @all_reduce_16mib
// ESTIMATE:  hierarchical          0.000       201.327
// ESTIMATE:  reduce-share          0.000       100.663
func.func @all_reduce_16mib(%c: !m2n.comm<4>, %x: !m2n.dist<4096x1024xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<4096x1024xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<4096x1024xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}
