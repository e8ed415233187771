// Routing a quantizing plan (docs/fp8-scaling.md): the amax exchange joins
// the data steps as steps of the schedule, in blocks: each source rank's
// share (amax), the exchange into every source rank's quantizer table
// (copies, then max-reductions of blocks straddling source shards, each
// after the shares it reads and the copies it lands on), the data steps
// (every move out of a source after the exchange into the blocks of its
// source rank's quantizer table it touches, whoever executes it: the
// plan's semantics on every route), then the exchange into every
// destination's holder table and each destination's scale write after its
// holder entries. With scale-bands=N (1 by default), a tensor of more than
// chunk-bytes is cut into bands of block rows (at most N): shares, exchange
// and moves out of sources per band, each move waiting only for its band (BANDS). m2n-sim runs the
// schedules in two dependency orders from poisoned slots, tables, scales
// and destinations and compares every element and scale with the
// reference; every route leaves the plan's bytes.
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-verify-schedule | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology | m2n-opt | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=chunk-bytes=8 scale-bands=8" --m2n-verify-schedule | FileCheck %s --check-prefix=BANDS
// RUN: m2n-sim %s --route=hierarchical | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=flat | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=gather-bcast | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=hierarchical --topology=%S/Inputs/domains-of-4.json | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=hierarchical --chunk-bytes=8 --scale-bands=8 | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=flat --chunk-bytes=8 --scale-bands=8 | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=gather-bcast --chunk-bytes=8 --scale-bands=8 | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=hierarchical --chunk-bytes=8 --scale-bands=8 --topology=%S/Inputs/domains-of-4.json | FileCheck %s --check-prefix=SIM
// SIM: m2n-sim: PASS: 3 schedules
// RUN: rm -rf %t && m2n-sim %s --route=hierarchical --dump-dst=%t/schedules && m2n-sim %s --dump-dst=%t/plans
// RUN: diff -r %t/schedules %t/plans
// RUN: m2n-sim %s --route=gather-bcast --topology=%S/Inputs/domains-of-4.json --dump-dst=%t/bcast && diff -r %t/bcast %t/plans
// RUN: m2n-sim %s --route=hierarchical --chunk-bytes=8 --scale-bands=8 --dump-dst=%t/bands && diff -r %t/bands %t/plans
// Across nodes of 4 GPUs, rank 4's holder gets amaxes over the network,
// and the moves out of sources into rank 4 cross it.
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%S/Inputs/domains-of-4.json" --m2n-verify-schedule | FileCheck %s --check-prefix=NET
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology=quantize-once=false --m2n-verify-schedule | FileCheck %s --check-prefix=TWICE
// NET-LABEL: func.func @straddling_sources
// NET: m2n.step 11 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via network after [3, 6]
// NET: m2n.step 16 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via network after [0]

// Block column 0 straddles source ranks 0 and 1: rank 3's and 4's holder
// entries take a copy from one and a max from the other.
// CHECK-LABEL: func.func @straddling_sources
// CHECK: %{{.*}}, %{{.*}} = m2n.schedule %{{.*}} on %{{.*}} strategy = "hierarchical" topology({{.*}}) {scaling = #m2n.scaling<block(2, 4)>} : {{.*}}, !m2n.dist<2x2xf32, #{{.*}}> {
// CHECK-NEXT: m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
// CHECK-NEXT: m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
// CHECK-NEXT: m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
// CHECK-NEXT: m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
// CHECK-NEXT: m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
// CHECK-NEXT: m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
// CHECK-NEXT: m2n.step 6 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
// CHECK-NEXT: m2n.step 7 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
// CHECK-NEXT: m2n.step 8 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 6]
// CHECK-NEXT: m2n.step 9 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 7]
// CHECK-NEXT: m2n.step 10 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
// CHECK-NEXT: m2n.step 11 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 6]
// CHECK-NEXT: m2n.step 12 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 7]
// CHECK-NEXT: m2n.step 13 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
// CHECK-NEXT: m2n.step 14 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
// CHECK-NEXT: m2n.step 15 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
// CHECK-NEXT: m2n.step 16 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
// CHECK-NEXT: m2n.step 17 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
// CHECK-NEXT: m2n.step 18 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 14]
// CHECK-NEXT: m2n.step 19 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 16]
// CHECK-NEXT: m2n.step 20 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [14, 15, 18]
// CHECK-NEXT: m2n.step 21 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [16, 17, 19]
// CHECK-NEXT: }
// CHECK: return %{{.*}}, %{{.*}} :
// In two bands of one block row: rank 4's moves wait for the second
// band's quantizer blocks only, rank 3's for the first's.
// BANDS-LABEL: func.func @straddling_sources
// BANDS: m2n.step 0 amax src(0) [0:1, 0:1] -> slots(0) [0:1, 0:1] via local
// BANDS-NEXT: m2n.step 1 amax src(1) [0:1, 0:1] -> slots(1) [0:1, 0:1] via local
// BANDS-NEXT: m2n.step 2 amax src(2) [0:1, 0:1] -> slots(2) [0:1, 0:1] via local
// BANDS-NEXT: m2n.step 3 copy slots(0) [0:1, 0:1] -> quantizer(0) [0:1, 0:1] via local after [0]
// BANDS-NEXT: m2n.step 4 copy slots(1) [0:1, 0:1] -> quantizer(1) [0:1, 0:1] via local after [1]
// BANDS-NEXT: m2n.step 5 copy slots(2) [0:1, 0:1] -> quantizer(2) [0:1, 0:1] via local after [2]
// BANDS-NEXT: m2n.step 6 reduce<max> slots(1) [0:1, 0:1] -> quantizer(0) [0:1, 0:1] via nvlink after [1, 3]
// BANDS-NEXT: m2n.step 7 reduce<max> slots(0) [0:1, 0:1] -> quantizer(1) [0:1, 0:1] via nvlink after [0, 4]
// BANDS-NEXT: m2n.step 8 amax src(0) [1:2, 0:1] -> slots(0) [1:2, 0:1] via local
// BANDS-NEXT: m2n.step 9 amax src(1) [1:2, 0:1] -> slots(1) [1:2, 0:1] via local
// BANDS-NEXT: m2n.step 10 amax src(2) [1:2, 0:1] -> slots(2) [1:2, 0:1] via local
// BANDS-NEXT: m2n.step 11 copy slots(0) [1:2, 0:1] -> quantizer(0) [1:2, 0:1] via local after [8]
// BANDS-NEXT: m2n.step 12 copy slots(1) [1:2, 0:1] -> quantizer(1) [1:2, 0:1] via local after [9]
// BANDS-NEXT: m2n.step 13 copy slots(2) [1:2, 0:1] -> quantizer(2) [1:2, 0:1] via local after [10]
// BANDS-NEXT: m2n.step 14 reduce<max> slots(1) [1:2, 0:1] -> quantizer(0) [1:2, 0:1] via nvlink after [9, 11]
// BANDS-NEXT: m2n.step 15 reduce<max> slots(0) [1:2, 0:1] -> quantizer(1) [1:2, 0:1] via nvlink after [8, 12]
// BANDS-NEXT: m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 6]
// BANDS-NEXT: m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 7]
// BANDS-NEXT: m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
// BANDS-NEXT: m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [11, 14]
// BANDS-NEXT: m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [12, 15]
// BANDS-NEXT: m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [13]
// BANDS-NEXT: m2n.step 22 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
// BANDS-NEXT: m2n.step 23 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
// BANDS-NEXT: m2n.step 24 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 22]
// BANDS-NEXT: m2n.step 25 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [8]
// BANDS-NEXT: m2n.step 26 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [10]
// BANDS-NEXT: m2n.step 27 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [9, 25]
// BANDS-NEXT: m2n.step 28 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [22, 23, 24]
// BANDS-NEXT: m2n.step 29 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [25, 26, 27]
// BANDS-NEXT: }
func.func @straddling_sources(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>)
    -> (!m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>
  return %q, %s : !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>
}

// One tensor scale: every source rank computes its part of the one block,
// every table holds it (its own share copied first, max from the others).
// CHECK-LABEL: func.func @tensor_scale
// CHECK: m2n.step 0 amax src(0) [0:1, 0:1] -> slots(0) [0:1, 0:1] via local
// CHECK: m2n.step 3 copy slots(0) [0:1, 0:1] -> quantizer(0) [0:1, 0:1] via local after [0]
// CHECK: m2n.step 6 reduce<max> slots(1) [0:1, 0:1] -> quantizer(0) [0:1, 0:1] via nvlink after [1, 3]
// CHECK: m2n.step 12 copy src(0) [0:2, 0:4] -> dst(3) [0:2, 0:4] via nvlink after [3, 6, 7]
// CHECK: m2n.step 18 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
// CHECK: m2n.step 23 reduce<max> slots(2) [0:1, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [2, 19]
// CHECK: m2n.step 25 scale holder(4) [0:1, 0:1] -> scales(4) [0:1, 0:1] via local after [19, 22, 23]
// One block: one band whatever the chunk size.
// BANDS-LABEL: func.func @tensor_scale
// BANDS: m2n.step 12 copy src(0) [0:2, 0:4] -> dst(3) [0:2, 0:4] via nvlink after [3, 6, 7]
func.func @tensor_scale(%c: !m2n.comm<5>, %w: !m2n.dist<6x8xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>>)
    -> (!m2n.dist<6x8xf8E5M2, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<1>]>>, !m2n.dist<1x1xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<1>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<tensor>} : !m2n.comm<5>, !m2n.dist<6x8xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>> -> !m2n.dist<6x8xf8E5M2, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<1>]>>, !m2n.dist<1x1xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<1>]>>
  return %q, %s : !m2n.dist<6x8xf8E5M2, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<1>]>>, !m2n.dist<1x1xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<1>]>>
}

// MX scales of 32 elements along the last dim, replicated destinations in
// one NVLink domain: each region is quantized once, by the replica that has
// quantized the fewest elements so far, and the other replica copies its
// fp8 bytes (quantize-once, the default); with quantize-once=false each
// replica pulls and quantizes its own copy (TWICE).
// CHECK-LABEL: func.func @mx_replicated
// CHECK: m2n.step 4 copy src(0) [0:4, 0:32] -> dst(2) [0:4, 0:32] via nvlink after [2]
// CHECK-NEXT: m2n.step 5 copy dst(2) [0:4, 0:32] -> dst(3) [0:4, 0:32] via nvlink after [4]
// CHECK-NEXT: m2n.step 6 copy src(1) [0:4, 0:32] -> dst(3) [0:4, 32:64] via nvlink after [3]
// CHECK-NEXT: m2n.step 7 copy dst(3) [0:4, 32:64] -> dst(2) [0:4, 32:64] via nvlink after [6]
// TWICE-LABEL: func.func @mx_replicated
// TWICE: m2n.step 4 copy src(0) [0:4, 0:32] -> dst(2) [0:4, 0:32] via nvlink after [2]
// TWICE-NEXT: m2n.step 5 copy src(0) [0:4, 0:32] -> dst(3) [0:4, 0:32] via nvlink after [2]
// TWICE-NEXT: m2n.step 6 copy src(1) [0:4, 0:32] -> dst(2) [0:4, 32:64] via nvlink after [3]
// TWICE-NEXT: m2n.step 7 copy src(1) [0:4, 0:32] -> dst(3) [0:4, 32:64] via nvlink after [3]
// CHECK: scale holder(2) [0:4, 0:2] -> scales(2) [0:4, 0:2] via local
// CHECK: scale holder(3) [0:4, 0:2] -> scales(3) [0:4, 0:2] via local
func.func @mx_replicated(%c: !m2n.comm<4>, %w: !m2n.dist<4x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>)
    -> (!m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>>, !m2n.dist<4x2xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<mx>} : !m2n.comm<4>, !m2n.dist<4x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>>, !m2n.dist<4x2xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>>
  return %q, %s : !m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>>, !m2n.dist<4x2xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>>
}
