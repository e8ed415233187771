// RUN: m2n-opt %s --m2n-outline-reshards --mlir-print-local-scope | FileCheck %s
// The outlined module verifies and round-trips.
// RUN: m2n-opt %s --m2n-outline-reshards | m2n-opt | FileCheck %s --check-prefix=ROUND
// RUN: m2n-opt %s --m2n-outline-reshards | FileCheck %s --check-prefix=NESTED
// RUN: m2n-opt %s --m2n-outline-reshards | FileCheck %s --check-prefix=SCHEDULE
// The pipeline lowers the hand-written schedule and runs it (host backend,
// every rank checked).
// RUN: m2n-run %S/Inputs/schedule-by-hand.mlir | FileCheck %s --check-prefix=RESULT
// RESULT: PASS

// Tensors with the same layouts, shape, types, scale and topology share one
// m2n.reshard_fn; any difference gives another.
// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[C:.*]]: !m2n.comm<4>, %[[A:[^:]*]]: {{.*}}, %[[B:[^:]*]]: {{.*}}, %[[D:[^:]*]]: {{.*}}, %[[E:[^:]*]]: {{.*}}, %[[F:[^:]*]]: {{.*}})
// CHECK: %[[R0:.*]] = m2n.call @[[S:reshard_0_0]](%[[A]]) on %[[C]]
// CHECK: %[[R1:.*]] = m2n.call @[[S]](%[[B]]) on %[[C]]
// CHECK: m2n.call @[[T:reshard_1]](%[[D]])
// CHECK: m2n.call @[[U:reshard_2]](%[[E]])
// CHECK: m2n.call @[[V:reshard_3]](%[[F]])
// CHECK-NOT: m2n.reshard %
// CHECK-LABEL: func.func @topology_per_function
// CHECK: m2n.call @[[W:reshard_4]]
// CHECK-LABEL: func.func @reshard_0
// CHECK-LABEL: m2n.reshard_fn @reshard_0_0 {
// CHECK: ^bb0(%[[IN:.*]]: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, %[[COMM:.*]]: !m2n.comm<4>):
// CHECK-NEXT: %[[X:.*]] = m2n.reshard %[[IN]] on %[[COMM]] : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>>
// CHECK-NEXT: m2n.yield %[[X]]
// CHECK: m2n.reshard_fn @reshard_1 {
// CHECK: m2n.reshard {{.*}} -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
// CHECK: m2n.reshard_fn @reshard_2 {
// CHECK: m2n.reshard {{.*}} {scale = 2.000000e+00 : f32}
// CHECK: m2n.reshard_fn @reshard_3 {
// CHECK: m2n.reshard {{.*}} {m2n.topology = #m2n.topology<domains = {{\[\[}}0, 1], [2, 3]]
// CHECK: m2n.reshard_fn @reshard_4 {
// CHECK: m2n.reshard {{.*}} {m2n.topology = #m2n.topology<domains = {{\[\[}}0, 1, 2, 3]]
// ROUND: m2n.reshard_fn
#src = #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>
#dst = #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>
#other = #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>
func.func @layers(%c: !m2n.comm<4>, %a: !m2n.dist<8xf32, #src>, %b: !m2n.dist<8xf32, #src>, %d: !m2n.dist<8xf32, #src>, %e: !m2n.dist<8xf32, #src>, %f: !m2n.dist<8xf32, #src>) {
  %0 = m2n.reshard %a on %c : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst>
  %1 = m2n.reshard %b on %c : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst>
  %2 = m2n.reshard %d on %c : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #other>
  %3 = m2n.reshard %e on %c {scale = 2.0 : f32} : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xbf16, #dst>
  %4 = m2n.reshard %f on %c {m2n.topology = #m2n.topology<domains = [[0, 1], [2, 3]], nvlink_gbps = 450.0, network_gbps = 50.0>} : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst>
  return
}

func.func @topology_per_function(%c: !m2n.comm<4>, %a: !m2n.dist<8xf32, #src>) attributes {m2n.topology = #m2n.topology<domains = [[0, 1, 2, 3]], nvlink_gbps = 450.0, network_gbps = 50.0>} {
  %0 = m2n.reshard %a on %c : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst>
  return
}

// A function of the user's already has the name: the shared reshard gets
// another.
func.func @reshard_0() {
  return
}

// A reshard in a nested module is shared within that module, where its call
// finds it.
// NESTED-LABEL: module @inner
// NESTED: func.func @nested
// NESTED: m2n.call @[[N:reshard_[0-9]+]]
// NESTED: m2n.reshard_fn @[[N]] {
// NESTED-NEXT: ^bb0
// NESTED-NEXT: m2n.reshard
// NESTED-NEXT: m2n.yield
// NESTED-NEXT: }
// NESTED-NEXT: }
module @inner {
  func.func @nested(%c: !m2n.comm<4>, %a: !m2n.dist<8xf32, #src>) {
    %0 = m2n.reshard %a on %c : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst>
    return
  }
}

// A hand-written schedule is moved, body and all, into a function of its
// own (never shared), so the pipeline's per-function passes lower it.
// SCHEDULE-LABEL: func.func @by_hand
// SCHEDULE: m2n.call @[[H:reshard_[0-9]+]](%{{.*}}) on
// SCHEDULE: m2n.reshard_fn @[[H]] {
// SCHEDULE: m2n.schedule %{{.*}} on %{{.*}} strategy = "flat"
// SCHEDULE-NEXT: m2n.step 0 copy src(0) [0:4] -> dst(2) [0:4] via nvlink
// SCHEDULE-NEXT: m2n.step 1 copy src(1) [0:4] -> dst(2) [4:8] via nvlink
// SCHEDULE: m2n.yield
func.func @by_hand(%c: !m2n.comm<4>, %a: !m2n.dist<8xf32, #src>) {
  %0 = m2n.schedule %a on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2, 3]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst> {
    m2n.step 0 copy src(0) [0:4] -> dst(2) [0:4] via nvlink
    m2n.step 1 copy src(1) [0:4] -> dst(2) [4:8] via nvlink
    m2n.step 2 copy src(0) [0:4] -> dst(3) [0:4] via nvlink
    m2n.step 3 copy src(1) [0:4] -> dst(3) [4:8] via nvlink
  }
  return
}
