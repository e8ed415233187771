// The plan of a quantizing reshard (docs/fp8-scaling.md): the transfers,
// each source rank's share of the block amaxes and the exchange that fills
// every quantizer and holder table. m2n-sim runs every plan's three phases
// on the host and compares each destination element and scale bit for bit
// with the reference quantizer.
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-verify-plan | FileCheck %s
// RUN: m2n-sim %s | FileCheck %s --check-prefix=SIM

// SIM: m2n-sim: PASS: 5 plans

// Blocks straddling source shards: 2 x 4 blocks over TP3 columns of 2.
// Block column 0 lies on ranks 0 and 1: each computes the amax of its half,
// each quantizer table and rank 3's and 4's holder tables take a copy and a
// max. The edge block column 1 (columns 4-5) lies on rank 2 alone.
// CHECK-LABEL: func.func @straddling_sources
// CHECK: %{{.*}}, %{{.*}} = m2n.plan %{{.*}} on %{{.*}} {scaling = #m2n.scaling<block(2, 4)>}
// CHECK: m2n.transfer copy from 2 [2:4, 0:2] to 4 [0:2, 4:6]
// CHECK-NEXT: m2n.amax on 0 blocks [0:2, 0:1]
// CHECK-NEXT: m2n.amax on 1 blocks [0:2, 0:1]
// CHECK-NEXT: m2n.amax on 2 blocks [0:2, 1:2]
// CHECK-NEXT: m2n.exchange copy from 0 [0:2, 0:1] to 0 quantizer [0:2, 0:1]
// CHECK-NEXT: m2n.exchange copy from 1 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
// CHECK-NEXT: m2n.exchange copy from 2 [0:2, 0:1] to 2 quantizer [0:2, 0:1]
// CHECK-NEXT: m2n.exchange copy from 0 [0:1, 0:1] to 3 holder [0:1, 0:1]
// CHECK-NEXT: m2n.exchange copy from 2 [0:1, 0:1] to 3 holder [0:1, 1:2]
// CHECK-NEXT: m2n.exchange copy from 0 [1:2, 0:1] to 4 holder [0:1, 0:1]
// CHECK-NEXT: m2n.exchange copy from 2 [1:2, 0:1] to 4 holder [0:1, 1:2]
// CHECK-NEXT: m2n.exchange max from 1 [0:2, 0:1] to 0 quantizer [0:2, 0:1]
// CHECK-NEXT: m2n.exchange max from 0 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
// CHECK-NEXT: m2n.exchange max from 1 [0:1, 0:1] to 3 holder [0:1, 0:1]
// CHECK-NEXT: m2n.exchange max from 1 [1:2, 0:1] to 4 holder [0:1, 0:1]
// CHECK-NEXT: }
func.func @straddling_sources(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>)
    -> (!m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>
  return %q, %s : !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>
}

// Replicated sources (TP2 x DP2 trainer) share their blocks: the replicas
// of each box split its blocks along the widest block dimension (here the
// 4 block rows, torch.chunk), so every element is read once.
// CHECK-LABEL: func.func @replicas_split_blocks
// CHECK: m2n.amax on 0 blocks [0:2, 0:2]
// CHECK-NEXT: m2n.amax on 1 blocks [2:4, 0:2]
// CHECK-NEXT: m2n.amax on 2 blocks [0:2, 2:4]
// CHECK-NEXT: m2n.amax on 3 blocks [2:4, 2:4]
func.func @replicas_split_blocks(%c: !m2n.comm<8>, %w: !m2n.dist<512x512xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<1>, replicate]>>)
    -> (!m2n.dist<512x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<0>]>>, !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<8>, !m2n.dist<512x512xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<1>, replicate]>> -> !m2n.dist<512x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<0>]>>, !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<0>]>>
  return %q, %s : !m2n.dist<512x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<0>]>>, !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<0>]>>
}

// DeepSeek-V3's kv_a_proj_with_mqa (576 rows: 4.5 blocks of 128) from TP4
// rows of 144 to TP2 columns: blocks straddle source shards and the edge
// block row is half a block.
// CHECK-LABEL: func.func @uneven_576
// CHECK: m2n.amax on 1 blocks [1:3, 0:2]
func.func @uneven_576(%c: !m2n.comm<6>, %w: !m2n.dist<576x256xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>)
    -> (!m2n.dist<576x256xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1>]>>, !m2n.dist<5x2xf32, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<6>, !m2n.dist<576x256xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<576x256xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1>]>>, !m2n.dist<5x2xf32, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1>]>>
  return %q, %s : !m2n.dist<576x256xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1>]>>, !m2n.dist<5x2xf32, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1>]>>
}

// OCP MXFP8 into e5m2 (e8m0 scales, 32 elements of the last dimension),
// from uneven source shards of 3 over 5 ranks.
// CHECK-LABEL: func.func @mx_e5m2
// CHECK: {scaling = #m2n.scaling<mx>}
func.func @mx_e5m2(%c: !m2n.comm<7>, %w: !m2n.dist<7x96xf16, #m2n.layout<#m2n.mesh<[5]>, [shard<0>]>>)
    -> (!m2n.dist<7x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], base = 5>, [shard<1>]>>, !m2n.dist<7x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], base = 5>, [shard<1>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<mx>} : !m2n.comm<7>, !m2n.dist<7x96xf16, #m2n.layout<#m2n.mesh<[5]>, [shard<0>]>> -> !m2n.dist<7x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], base = 5>, [shard<1>]>>, !m2n.dist<7x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], base = 5>, [shard<1>]>>
  return %q, %s : !m2n.dist<7x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], base = 5>, [shard<1>]>>, !m2n.dist<7x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], base = 5>, [shard<1>]>>
}

// One scale for the whole tensor: every rank's share is the one block; the
// exchange max-reduces all of them into every table.
// CHECK-LABEL: func.func @one_tensor_scale
// CHECK: m2n.amax on 0 blocks [0:1]
// CHECK: m2n.amax on 1 blocks [0:1]
// CHECK: m2n.exchange max from 1 [0:1] to 2 holder [0:1]
func.func @one_tensor_scale(%c: !m2n.comm<3>, %w: !m2n.dist<10xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)
    -> (!m2n.dist<10xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<tensor>} : !m2n.comm<3>, !m2n.dist<10xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<10xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>
  return %q, %s : !m2n.dist<10xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>
}
