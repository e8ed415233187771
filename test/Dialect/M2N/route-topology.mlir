// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --mlir-print-local-scope | FileCheck %s --check-prefix=HIER
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology=strategy=flat --mlir-print-local-scope | FileCheck %s --check-prefix=FLAT
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology=strategy=gather-bcast --mlir-print-local-scope | FileCheck %s --check-prefix=BCAST
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=chunk-bytes=8" --mlir-print-local-scope | FileCheck %s --check-prefix=CHUNK
// RUN: m2n-sim %s --route hierarchical --chunk-bytes 8 | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route flat --chunk-bytes 8 | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route gather-bcast --chunk-bytes 8 | FileCheck %s --check-prefix=SIM
// SIM: m2n-sim: PASS: 2 schedules
// RUN: m2n-opt %S/Inputs/four-tib.mlir --m2n-plan-intersections "--m2n-route-topology=chunk-bytes=4194304" | FileCheck %s --check-prefix=HUGE

// A step is cut into at most 1024 chunks: a 4 TiB tensor's 2 TiB transfers
// become 1024 chunks of 2^29 elements each, not 2^19 chunks of 4 MiB.
// HUGE: m2n.step 0 copy src(0) [0:536870912] -> dst(2) [0:536870912] via nvlink
// HUGE: m2n.step 1023 copy src(0) [549218942976:549755813888] -> dst(2) [549218942976:549755813888] via nvlink
// HUGE-NEXT: m2n.step 1024 copy src(1) [0:536870912] -> dst(3) [0:536870912] via nvlink
// HUGE: m2n.step 2047 copy src(1) [549218942976:549755813888]
// HUGE-NOT: m2n.step 2048

// The M2N paper's Example A on two NVLink domains, trainer {0-3} and
// generator {4-7}: hierarchical sends every row over the network once, into
// a leader chosen so that both replicas of a TP slot lead one row each, and
// completes replication over NVLink; flat sends every row to both replicas;
// gather-bcast gathers to rank 0 and passes the whole tensor around a ring.

// HIER-LABEL: func.func @example_a
// HIER: m2n.schedule %{{.*}} on %{{.*}} strategy = "hierarchical" topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// HIER-NEXT: m2n.step 0 copy src(0) [0:1, 0:8] -> dst(4) [0:1, 0:8] via network
// HIER-NEXT: m2n.step 1 copy dst(4) [0:1, 0:8] -> dst(6) [0:1, 0:8] via nvlink after [0]
// HIER-NEXT: m2n.step 2 copy src(1) [0:1, 0:8] -> dst(6) [1:2, 0:8] via network
// HIER-NEXT: m2n.step 3 copy dst(6) [1:2, 0:8] -> dst(4) [1:2, 0:8] via nvlink after [2]
// HIER-NEXT: m2n.step 4 copy src(2) [0:1, 0:8] -> dst(5) [0:1, 0:8] via network
// HIER-NEXT: m2n.step 5 copy dst(5) [0:1, 0:8] -> dst(7) [0:1, 0:8] via nvlink after [4]
// HIER-NEXT: m2n.step 6 copy src(3) [0:1, 0:8] -> dst(7) [1:2, 0:8] via network
// HIER-NEXT: m2n.step 7 copy dst(7) [1:2, 0:8] -> dst(5) [1:2, 0:8] via nvlink after [6]
// HIER-NEXT: }
// HIER-LABEL: func.func @all_reduce
// HIER: m2n.schedule %{{.*}} on %{{.*}} strategy = "hierarchical" topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// HIER-NEXT: m2n.scratch 0 on 4 [4]
// HIER-NEXT: m2n.scratch 1 on 0 [4]
// HIER-NEXT: m2n.step 0 copy src(0) [0:4] -> dst(0) [0:4] via local
// HIER-NEXT: m2n.step 1 copy src(1) [0:4] -> dst(1) [0:4] via local
// HIER-NEXT: m2n.step 2 copy src(0) [0:4] -> scratch0(4) [0:4] via network
// HIER-NEXT: m2n.step 3 reduce<sum> scratch0(4) [0:4] -> dst(4) [0:4] via local after [2, 5]
// HIER-NEXT: m2n.step 4 reduce<sum> scratch0(4) [0:4] -> dst(5) [0:4] via nvlink after [2, 6]
// HIER-NEXT: m2n.step 5 copy src(4) [0:4] -> dst(4) [0:4] via local
// HIER-NEXT: m2n.step 6 copy src(5) [0:4] -> dst(5) [0:4] via local
// HIER-NEXT: m2n.step 7 copy src(4) [0:4] -> scratch1(0) [0:4] via network
// HIER-NEXT: m2n.step 8 reduce<sum> scratch1(0) [0:4] -> dst(0) [0:4] via local after [0, 7]
// HIER-NEXT: m2n.step 9 reduce<sum> scratch1(0) [0:4] -> dst(1) [0:4] via nvlink after [1, 7]
// HIER-NEXT: }

// FLAT-LABEL: func.func @example_a
// FLAT: m2n.schedule %{{.*}} on %{{.*}} strategy = "flat" topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// FLAT-NEXT: m2n.step 0 copy src(0) [0:1, 0:8] -> dst(4) [0:1, 0:8] via network
// FLAT-NEXT: m2n.step 1 copy src(1) [0:1, 0:8] -> dst(4) [1:2, 0:8] via network
// FLAT-NEXT: m2n.step 2 copy src(2) [0:1, 0:8] -> dst(5) [0:1, 0:8] via network
// FLAT-NEXT: m2n.step 3 copy src(3) [0:1, 0:8] -> dst(5) [1:2, 0:8] via network
// FLAT-NEXT: m2n.step 4 copy src(0) [0:1, 0:8] -> dst(6) [0:1, 0:8] via network
// FLAT-NEXT: m2n.step 5 copy src(1) [0:1, 0:8] -> dst(6) [1:2, 0:8] via network
// FLAT-NEXT: m2n.step 6 copy src(2) [0:1, 0:8] -> dst(7) [0:1, 0:8] via network
// FLAT-NEXT: m2n.step 7 copy src(3) [0:1, 0:8] -> dst(7) [1:2, 0:8] via network
// FLAT-NEXT: }
// FLAT-LABEL: func.func @all_reduce
// FLAT: m2n.schedule %{{.*}} on %{{.*}} strategy = "flat" topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// FLAT-NEXT: m2n.step 0 copy src(0) [0:4] -> dst(0) [0:4] via local
// FLAT-NEXT: m2n.step 1 reduce<sum> src(4) [0:4] -> dst(0) [0:4] via network after [0]
// FLAT-NEXT: m2n.step 2 copy src(1) [0:4] -> dst(1) [0:4] via local
// FLAT-NEXT: m2n.step 3 reduce<sum> src(5) [0:4] -> dst(1) [0:4] via network after [2]
// FLAT-NEXT: m2n.step 4 copy src(4) [0:4] -> dst(4) [0:4] via local
// FLAT-NEXT: m2n.step 5 reduce<sum> src(0) [0:4] -> dst(4) [0:4] via network after [4]
// FLAT-NEXT: m2n.step 6 copy src(5) [0:4] -> dst(5) [0:4] via local
// FLAT-NEXT: m2n.step 7 reduce<sum> src(1) [0:4] -> dst(5) [0:4] via network after [6]
// FLAT-NEXT: }

// BCAST-LABEL: func.func @example_a
// BCAST: m2n.schedule %{{.*}} on %{{.*}} strategy = "gather-bcast" topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// BCAST-NEXT: m2n.scratch 0 on 0 [4, 8]
// BCAST-NEXT: m2n.scratch 1 on 4 [4, 8]
// BCAST-NEXT: m2n.scratch 2 on 5 [4, 8]
// BCAST-NEXT: m2n.scratch 3 on 6 [4, 8]
// BCAST-NEXT: m2n.scratch 4 on 7 [4, 8]
// BCAST-NEXT: m2n.step 0 copy src(0) [0:1, 0:8] -> scratch0(0) [0:1, 0:8] via local
// BCAST-NEXT: m2n.step 1 copy src(1) [0:1, 0:8] -> scratch0(0) [1:2, 0:8] via nvlink
// BCAST-NEXT: m2n.step 2 copy src(2) [0:1, 0:8] -> scratch0(0) [2:3, 0:8] via nvlink
// BCAST-NEXT: m2n.step 3 copy src(3) [0:1, 0:8] -> scratch0(0) [3:4, 0:8] via nvlink
// BCAST-NEXT: m2n.step 4 copy scratch0(0) [0:4, 0:8] -> scratch1(4) [0:4, 0:8] via network after [0, 1, 2, 3]
// BCAST-NEXT: m2n.step 5 copy scratch1(4) [0:4, 0:8] -> scratch2(5) [0:4, 0:8] via nvlink after [4]
// BCAST-NEXT: m2n.step 6 copy scratch2(5) [0:4, 0:8] -> scratch3(6) [0:4, 0:8] via nvlink after [5]
// BCAST-NEXT: m2n.step 7 copy scratch3(6) [0:4, 0:8] -> scratch4(7) [0:4, 0:8] via nvlink after [6]
// BCAST-NEXT: m2n.step 8 copy scratch1(4) [0:2, 0:8] -> dst(4) [0:2, 0:8] via local after [4]
// BCAST-NEXT: m2n.step 9 copy scratch2(5) [2:4, 0:8] -> dst(5) [0:2, 0:8] via local after [5]
// BCAST-NEXT: m2n.step 10 copy scratch3(6) [0:2, 0:8] -> dst(6) [0:2, 0:8] via local after [6]
// BCAST-NEXT: m2n.step 11 copy scratch4(7) [2:4, 0:8] -> dst(7) [0:2, 0:8] via local after [7]
// BCAST-NEXT: }
// BCAST-LABEL: func.func @all_reduce
// BCAST: m2n.schedule %{{.*}} on %{{.*}} strategy = "gather-bcast" topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// BCAST-NEXT: m2n.scratch 0 on 0 [4]
// BCAST-NEXT: m2n.scratch 1 on 1 [4]
// BCAST-NEXT: m2n.scratch 2 on 4 [4]
// BCAST-NEXT: m2n.scratch 3 on 5 [4]
// BCAST-NEXT: m2n.step 0 copy src(0) [0:4] -> scratch0(0) [0:4] via local
// BCAST-NEXT: m2n.step 1 reduce<sum> src(4) [0:4] -> scratch0(0) [0:4] via network after [0]
// BCAST-NEXT: m2n.step 2 copy scratch0(0) [0:4] -> scratch1(1) [0:4] via nvlink after [0, 1]
// BCAST-NEXT: m2n.step 3 copy scratch1(1) [0:4] -> scratch2(4) [0:4] via network after [2]
// BCAST-NEXT: m2n.step 4 copy scratch2(4) [0:4] -> scratch3(5) [0:4] via nvlink after [3]
// BCAST-NEXT: m2n.step 5 copy scratch0(0) [0:4] -> dst(0) [0:4] via local after [0, 1]
// BCAST-NEXT: m2n.step 6 copy scratch1(1) [0:4] -> dst(1) [0:4] via local after [2]
// BCAST-NEXT: m2n.step 7 copy scratch2(4) [0:4] -> dst(4) [0:4] via local after [3]
// BCAST-NEXT: m2n.step 8 copy scratch3(5) [0:4] -> dst(5) [0:4] via local after [4]
// BCAST-NEXT: }

// Chunks of 8 bytes (4 bf16): each row moves in two halves, and each half is
// forwarded as soon as it has arrived.
// CHUNK-LABEL: func.func @example_a
// CHUNK: m2n.schedule %{{.*}} on %{{.*}} strategy = "hierarchical" topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// CHUNK-NEXT: m2n.step 0 copy src(0) [0:1, 0:4] -> dst(4) [0:1, 0:4] via network
// CHUNK-NEXT: m2n.step 1 copy src(0) [0:1, 4:8] -> dst(4) [0:1, 4:8] via network
// CHUNK-NEXT: m2n.step 2 copy dst(4) [0:1, 0:4] -> dst(6) [0:1, 0:4] via nvlink after [0]
// CHUNK-NEXT: m2n.step 3 copy dst(4) [0:1, 4:8] -> dst(6) [0:1, 4:8] via nvlink after [1]
// CHUNK-NEXT: m2n.step 4 copy src(1) [0:1, 0:4] -> dst(6) [1:2, 0:4] via network
// CHUNK-NEXT: m2n.step 5 copy src(1) [0:1, 4:8] -> dst(6) [1:2, 4:8] via network
// CHUNK-NEXT: m2n.step 6 copy dst(6) [1:2, 0:4] -> dst(4) [1:2, 0:4] via nvlink after [4]
// CHUNK-NEXT: m2n.step 7 copy dst(6) [1:2, 4:8] -> dst(4) [1:2, 4:8] via nvlink after [5]
// CHUNK-NEXT: m2n.step 8 copy src(2) [0:1, 0:4] -> dst(5) [0:1, 0:4] via network
// CHUNK-NEXT: m2n.step 9 copy src(2) [0:1, 4:8] -> dst(5) [0:1, 4:8] via network
// CHUNK-NEXT: m2n.step 10 copy dst(5) [0:1, 0:4] -> dst(7) [0:1, 0:4] via nvlink after [8]
// CHUNK-NEXT: m2n.step 11 copy dst(5) [0:1, 4:8] -> dst(7) [0:1, 4:8] via nvlink after [9]
// CHUNK-NEXT: m2n.step 12 copy src(3) [0:1, 0:4] -> dst(7) [1:2, 0:4] via network
// CHUNK-NEXT: m2n.step 13 copy src(3) [0:1, 4:8] -> dst(7) [1:2, 4:8] via network
// CHUNK-NEXT: m2n.step 14 copy dst(7) [1:2, 0:4] -> dst(5) [1:2, 0:4] via nvlink after [12]
// CHUNK-NEXT: m2n.step 15 copy dst(7) [1:2, 4:8] -> dst(5) [1:2, 4:8] via nvlink after [13]
// CHUNK-NEXT: }

#trainer_tp4 = #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>
#generator_dp2_tp2 = #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>
module attributes {m2n.topology = #m2n.topology<domains = [[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 450.0, network_gbps = 50.0>} {
func.func @example_a(%comm: !m2n.comm<8>, %w: !m2n.dist<4x8xbf16, #trainer_tp4>) -> !m2n.dist<4x8xbf16, #generator_dp2_tp2> {
  %0 = m2n.reshard %w on %comm : !m2n.comm<8>, !m2n.dist<4x8xbf16, #trainer_tp4> -> !m2n.dist<4x8xbf16, #generator_dp2_tp2>
  return %0 : !m2n.dist<4x8xbf16, #generator_dp2_tp2>
}
// All-reduce of two contributions per domain, across two domains.
func.func @all_reduce(%comm: !m2n.comm<8>, %g: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [0, 1, 4, 5]>, [partial<sum>, replicate]>>) -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [0, 1, 4, 5]>, [replicate, replicate]>> {
  %0 = m2n.all_reduce %g on %comm mesh_axes = [0] : !m2n.comm<8>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [0, 1, 4, 5]>, [partial<sum>, replicate]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [0, 1, 4, 5]>, [replicate, replicate]>>
  return %0 : !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [0, 1, 4, 5]>, [replicate, replicate]>>
}
}
