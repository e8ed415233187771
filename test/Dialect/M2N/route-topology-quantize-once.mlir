// quantize-once (docs/routing.md): a quantizing reshard's region needed by
// several destination replicas of one NVLink domain is quantized once. A
// destination that holds the region's source quantizes it locally and the
// other replicas copy its fp8 bytes (each after the quantizing step it
// reads); with quantize-once=false every replica pulls and quantizes its
// own copy (TWICE). m2n-sim runs the schedule from poisoned buffers and
// compares every element and scale with the reference.
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-verify-schedule | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology=quantize-once=false --m2n-verify-schedule | FileCheck %s --check-prefix=TWICE
// RUN: m2n-sim %s --route=hierarchical | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=hierarchical --chunk-bytes=8 | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=hierarchical --quantize-once=false | FileCheck %s --check-prefix=SIM
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.m2n" -o /dev/null && m2n-artifact-dump %t.m2n | FileCheck %s --check-prefix=PROGRAM
// Nodes of 4 GPUs (NET): a domain's quantizer forwards within its domain;
// the other domain's leader receives the region over the network (its
// injector's send quantizes it again) and forwards the fp8 bytes.
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%S/Inputs/domains-of-4.json" --m2n-verify-schedule | FileCheck %s --check-prefix=NET
// RUN: m2n-sim %s --route=hierarchical --topology=%S/Inputs/domains-of-4.json | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=hierarchical --topology=%S/Inputs/domains-of-4.json --chunk-bytes=8 --scale-bands=2 | FileCheck %s --check-prefix=SIM
// SIM: m2n-sim: PASS: 5 schedules

// CHECK-LABEL: func.func @local_quantizer
// CHECK: m2n.step 6 copy src(0) [0:4, 0:32] -> dst(0) [0:4, 0:32] via local after [2, 4]
// CHECK-NEXT: m2n.step 7 copy dst(0) [0:4, 0:32] -> dst(1) [0:4, 0:32] via nvlink after [6]
// CHECK-NEXT: m2n.step 8 copy dst(0) [0:4, 0:32] -> dst(2) [0:4, 0:32] via nvlink after [6]
// CHECK-NEXT: m2n.step 9 copy src(1) [0:4, 0:32] -> dst(1) [0:4, 32:64] via local after [3, 5]
// CHECK-NEXT: m2n.step 10 copy dst(1) [0:4, 32:64] -> dst(0) [0:4, 32:64] via nvlink after [9]
// CHECK-NEXT: m2n.step 11 copy dst(1) [0:4, 32:64] -> dst(2) [0:4, 32:64] via nvlink after [9]
// TWICE-LABEL: func.func @local_quantizer
// TWICE: m2n.step 6 copy src(0) [0:4, 0:32] -> dst(0) [0:4, 0:32] via local after [2, 4]
// TWICE-NEXT: m2n.step 7 copy src(0) [0:4, 0:32] -> dst(1) [0:4, 0:32] via nvlink after [2, 4]
// TWICE-NEXT: m2n.step 8 copy src(0) [0:4, 0:32] -> dst(2) [0:4, 0:32] via nvlink after [2, 4]
// The program: rank 2 quantizes nothing; it copies fp8 bytes from ranks 0
// and 1 by TMA, each after that rank's quantizing move signals.
// PROGRAM-LABEL: rank 2:
// PROGRAM-NEXT: item copy tile dst(0) map0(0,0) -> dst(2) map2(0,0) 128B wait 0:3>=4
// PROGRAM-NEXT: item copy tile dst(1) map1(0,32) -> dst(2) map2(0,32) 128B wait 1:3>=4
// PROGRAM-NOT: src(
// PROGRAM: item scale vector holder(2)+0 -> scales(2)+0
func.func @local_quantizer(%c: !m2n.comm<3>, %w: !m2n.dist<4x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>)
    -> (!m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>, !m2n.dist<1x1xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<tensor>} : !m2n.comm<3>, !m2n.dist<4x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>, !m2n.dist<1x1xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
  return %q, %s : !m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>, !m2n.dist<1x1xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
}

// NET-LABEL: func.func @local_and_network
// NET: m2n.step 4 copy src(0) [0:4, 0:32] -> dst(0) [0:4, 0:32] via local after [2]
// NET-NEXT: m2n.step 5 copy dst(0) [0:4, 0:32] -> dst(1) [0:4, 0:32] via nvlink after [4]
// NET-NEXT: m2n.step 6 copy dst(0) [0:4, 0:32] -> dst(2) [0:4, 0:32] via nvlink after [4]
// NET-NEXT: m2n.step 7 copy dst(0) [0:4, 0:32] -> dst(3) [0:4, 0:32] via nvlink after [4]
// NET-NEXT: m2n.step 8 copy src(0) [0:4, 0:32] -> dst(4) [0:4, 0:32] via network after [2]
// NET-NEXT: m2n.step 9 copy dst(4) [0:4, 0:32] -> dst(5) [0:4, 0:32] via nvlink after [8]
func.func @local_and_network(%c: !m2n.comm<8>, %w: !m2n.dist<4x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>)
    -> (!m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[8]>, [replicate]>>, !m2n.dist<1x2xf32, #m2n.layout<#m2n.mesh<[8]>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(4, 32)>} : !m2n.comm<8>, !m2n.dist<4x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[8]>, [replicate]>>, !m2n.dist<1x2xf32, #m2n.layout<#m2n.mesh<[8]>, [replicate]>>
  return %q, %s : !m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[8]>, [replicate]>>, !m2n.dist<1x2xf32, #m2n.layout<#m2n.mesh<[8]>, [replicate]>>
}

// quantize-on-sources (SOURCES): the sources (ranks 0 and 1) are not
// destinations, so without it ranks 2 and 3 run every element's
// quantizing while 0 and 1 only compute amaxes. With it each region is cut
// at block rows (multiples of 4) into bands shared, water-filled, by its
// source (into a scratch of its own, copied by both destinations) and the
// two destinations (each copying the other's band); the copies come after
// every quantizing step.
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=quantize-on-sources=true" --m2n-verify-schedule | FileCheck %s --check-prefix=SOURCES
// RUN: m2n-sim %s --route=hierarchical --quantize-on-sources | FileCheck %s --check-prefix=SIM
// RUN: m2n-sim %s --route=hierarchical --quantize-on-sources --chunk-bytes=8 --scale-bands=2 | FileCheck %s --check-prefix=SIM
// RUN: m2n-run %s --pipeline=quantize-on-sources=true --seed=5 | FileCheck %s --check-prefix=HOST
// Across domains (NETSOURCES): the injector's network send quantizes the
// whole region, so it counts, and the domain's destinations take the bands.
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=quantize-on-sources=true topology=%S/Inputs/domains-of-4.json" --m2n-verify-schedule | FileCheck %s --check-prefix=NETSOURCES
// RUN: m2n-sim %s --route=hierarchical --quantize-on-sources --topology=%S/Inputs/domains-of-4.json --chunk-bytes=8 | FileCheck %s --check-prefix=SIM
// HOST: 5 passed, 0 failed
// SOURCES-LABEL: func.func @sources_apart
// SOURCES: m2n.scratch 0 on 0 [4, 32]
// SOURCES-NEXT: m2n.scratch 1 on 1 [4, 32]
// SOURCES: m2n.step 4 copy src(0) [0:4, 0:32] -> scratch0(0) [0:4, 0:32] via local after [2]
// SOURCES-NEXT: m2n.step 5 copy src(0) [4:8, 0:32] -> dst(3) [4:8, 0:32] via nvlink after [2]
// SOURCES-NEXT: m2n.step 6 copy src(1) [0:4, 0:32] -> scratch1(1) [0:4, 0:32] via local after [3]
// SOURCES-NEXT: m2n.step 7 copy src(1) [4:8, 0:32] -> dst(2) [4:8, 32:64] via nvlink after [3]
// SOURCES-NEXT: m2n.step 8 copy scratch0(0) [0:4, 0:32] -> dst(2) [0:4, 0:32] via nvlink after [4]
// SOURCES-NEXT: m2n.step 9 copy scratch0(0) [0:4, 0:32] -> dst(3) [0:4, 0:32] via nvlink after [4]
// SOURCES-NEXT: m2n.step 10 copy dst(3) [4:8, 0:32] -> dst(2) [4:8, 0:32] via nvlink after [5]
// SOURCES-NEXT: m2n.step 11 copy scratch1(1) [0:4, 0:32] -> dst(2) [0:4, 32:64] via nvlink after [6]
// SOURCES-NEXT: m2n.step 12 copy scratch1(1) [0:4, 0:32] -> dst(3) [0:4, 32:64] via nvlink after [6]
// SOURCES-NEXT: m2n.step 13 copy dst(2) [4:8, 32:64] -> dst(3) [4:8, 32:64] via nvlink after [7]
func.func @sources_apart(%c: !m2n.comm<4>, %w: !m2n.dist<8x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>)
    -> (!m2n.dist<8x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(4, 32)>} : !m2n.comm<4>, !m2n.dist<8x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<8x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [replicate]>>
  return %q, %s : !m2n.dist<8x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [replicate]>>
}

// NETSOURCES-LABEL: func.func @sources_across_domains
// NETSOURCES-NOT: scratch
// NETSOURCES: m2n.step 4 copy src(0) [0:4, 0:32] -> dst(2) [0:4, 0:32] via nvlink after [2]
// NETSOURCES-NEXT: m2n.step 5 copy src(0) [4:8, 0:32] -> dst(3) [4:8, 0:32] via nvlink after [2]
// NETSOURCES-NEXT: m2n.step 6 copy src(0) [0:8, 0:32] -> dst(5) [0:8, 0:32] via network after [2]
func.func @sources_across_domains(%c: !m2n.comm<8>, %w: !m2n.dist<8x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>)
    -> (!m2n.dist<8x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[3], ranks = [2, 3, 5]>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[3], ranks = [2, 3, 5]>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(4, 32)>} : !m2n.comm<8>, !m2n.dist<8x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<8x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[3], ranks = [2, 3, 5]>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[3], ranks = [2, 3, 5]>, [replicate]>>
  return %q, %s : !m2n.dist<8x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[3], ranks = [2, 3, 5]>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[3], ranks = [2, 3, 5]>, [replicate]>>
}

// A region inside one block row (rows 0:64 of blocks of 128) is cut along
// its columns, at multiples of 128.
// SOURCES-LABEL: func.func @one_block_row
// SOURCES: m2n.scratch 0 on 0 [64, 128]
// SOURCES: m2n.step 12 copy src(0) [0:64, 0:128] -> scratch0(0) [0:64, 0:128] via local after [4, 8]
// SOURCES-NEXT: m2n.step 13 copy src(0) [0:64, 128:384] -> dst(4) [0:64, 128:384] via nvlink after [4, 8]
// SOURCES-NEXT: m2n.step 14 copy src(0) [0:64, 384:512] -> dst(5) [0:64, 384:512] via nvlink after [4, 8]
func.func @one_block_row(%c: !m2n.comm<6>, %w: !m2n.dist<256x512xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>)
    -> (!m2n.dist<256x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [replicate]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<6>, !m2n.dist<256x512xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<256x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [replicate]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [replicate]>>
  return %q, %s : !m2n.dist<256x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [replicate]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [replicate]>>
}
