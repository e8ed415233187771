// --m2n-estimate on quantizing reshards (docs/fp8-scaling.md): the data
// travels as the destination's fp8 elements (converted before they leave
// the sender), the amax exchange as 4-byte blocks, the amax steps move
// nothing. Here every one of the 256 x 512 elements crosses the network
// once as one byte, and the exchange adds the straddled blocks' amaxes.
//
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-estimate=topology=%S/Inputs/domains-of-4.json" -o /dev/null | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%S/Inputs/domains-of-4.json" --m2n-estimate -o /dev/null | FileCheck %s --check-prefix=SCHEDULE

// CHECK: m2n-estimate: plan 0 in @block: 256x512xbf16 -> f8E4M3FN scaling block(128, 128) (0.262 MB), 8 ranks, 2 NVLink domains
// CHECK: flat 0.131
// CHECK: hierarchical 0.131
// In bytes: 131072 fp8 elements and 16 amaxes (4 destination ranks x the
// 4 blocks each touches) of 4 bytes.
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-estimate=topology=%S/Inputs/domains-of-4.json format=json" -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON: "strategy": "flat",
// JSON-NEXT: "reduce_share": false,
// JSON-NEXT: "network_bytes": 131136,
// SCHEDULE: m2n-estimate: schedule 0 in @block: 256x512xbf16 -> f8E4M3FN scaling block(128, 128)
// SCHEDULE: hierarchical 0.131

func.func @block(%c: !m2n.comm<8>, %w: !m2n.dist<256x512xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>)
    -> (!m2n.dist<256x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<8>, !m2n.dist<256x512xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<256x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>
  return %q, %s : !m2n.dist<256x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>
}
