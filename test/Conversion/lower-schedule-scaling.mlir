// --m2n-lower-schedule on a quantizing reshard (docs/fp8-scaling.md, the
// program level): amax steps become vector amax moves over one-row runs
// whose block lookup (`blocks E+P/W`) names each element's slot, the
// exchange becomes f32 moves between slots and tables (max on the SM path,
// ordered by m2n-order-reductions), scale steps become scale moves, and
// every move out of a source quantizes with its source rank's quantizer
// table (pulling it from the sender's memory over NVLink). The program prints, parses back, verifies, and runs on the host
// executor bit-exact against the reference quantizer (m2n-sim), writing
// the same bytes as the plan.
//
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-order-reductions --m2n-lower-schedule --m2n-verify-program | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-order-reductions --m2n-lower-schedule -o %t.mlir
// RUN: m2n-opt %t.mlir -o %t.again.mlir && m2n-opt %t.again.mlir | diff - %t.again.mlir
// RUN: m2n-opt %t.mlir --mlir-print-op-generic | m2n-opt | diff - %t.again.mlir
// RUN: m2n-sim %t.mlir | FileCheck %s --check-prefix=SIM
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=flat" --m2n-order-reductions "--m2n-lower-schedule=stage-bytes=16" -o %t.small.mlir
// RUN: m2n-sim %t.small.mlir | FileCheck %s --check-prefix=SIM
// In bands of block rows (chunk-bytes=16 scale-bands=8), each with its own counters.
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=chunk-bytes=16 scale-bands=8" --m2n-order-reductions --m2n-lower-schedule --m2n-verify-program -o %t.bands.mlir
// RUN: m2n-sim %t.bands.mlir | FileCheck %s --check-prefix=SIM
// RUN: FileCheck %s --input-file=%t.bands.mlir --check-prefix=BANDS
// RUN: rm -rf %t.dumps && m2n-sim %t.mlir --dump-dst=%t.dumps/programs && m2n-sim %s --dump-dst=%t.dumps/plans
// RUN: diff -r %t.dumps/programs %t.dumps/plans
//
// Across nodes of 4 GPUs (the trainer on one, the generator on the other)
// the amaxes cross the network: staged in f32 scratches (`amaxes`), a max
// received into staging first; quantized elements are packed by a
// quantizing move. The staged schedule verifies and simulates too.
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%S/../Dialect/M2N/Inputs/domains-of-4.json" --m2n-stage-network-steps --m2n-order-reductions --m2n-order-steps -o %t.staged.mlir
// RUN: m2n-opt %t.staged.mlir --m2n-verify-schedule -o /dev/null
// RUN: m2n-sim %t.staged.mlir | FileCheck %s --check-prefix=STAGED
// RUN: m2n-opt %t.staged.mlir --m2n-lower-schedule --m2n-verify-program -o %t.net.mlir
// RUN: FileCheck %s --input-file=%t.net.mlir --check-prefix=NET
// RUN: m2n-sim %t.net.mlir | FileCheck %s --check-prefix=SIM

// SIM: m2n-sim: PASS: 3 programs, {{[0-9]+}} moves, 1851 destination elements checked
// STAGED: m2n-sim: PASS: 3 schedules, {{[0-9]+}} steps, 1851 destination elements checked
// Two bands of one block row: rank 0 computes band 0's amaxes and copies
// them into its quantizer table before it starts on band 1's, each band
// with its own counter; rank 4 pulls its rows (band 0) first, waiting for
// band 0 of its senders' tables only, then its holder table and scales.
// BANDS-LABEL: func.func @block
// BANDS: m2n.rank 0 counters
// BANDS-NEXT: m2n.move vector amax src(0)+0 -> slots(0)+0 20B times 4 by (+20,+0) blocks 0+0/16 signal 0:0 step
// BANDS-NEXT: m2n.move vector copy slots(0)+0 -> quantizer(0)+0 4B signal 0:1 wait 0:0>=4 step
// BANDS-NEXT: m2n.move vector amax src(0)+80 -> slots(0)+0 20B times 2 by (+20,+0) blocks 1+0/16 signal 0:2 step
// BANDS-NEXT: m2n.move vector copy slots(0)+4 -> quantizer(0)+4 4B signal 0:3 wait 0:2>=2 step
// BANDS: m2n.rank 4 counters
// BANDS-NEXT: m2n.move vector copy src(0)+0 -> dst(4)+0 10B times 2 by (+20,+40) blocks 0+0/16 wait 0:1>=1 wait 0:4>=1
// BANDS-NOT: holder
// BANDS: m2n.move vector copy src(3)+0 -> dst(4)+30
// BANDS-NEXT: m2n.move vector copy slots(0)+0 -> holder(4)+0
// BANDS: m2n.move vector scale holder(4)+0 -> scales(4)+0 12B
// BANDS-NEXT: }
// NET-LABEL: func.func @block
// NET: m2n.scratch [[AMAXES:[0-9]+]] on 4 [1, 1] amaxes
// NET: m2n.move network copy slots(1)+0 -> scratch[[AMAXES]](4)+0 4B
// NET: m2n.move vector reduce<max> scratch[[AMAXES]](4)+0 -> holder(4)+0 4B

// A 6 x 40 bf16 weight split by columns over ranks 0-3 into rows over 4-7,
// with 4 x 16 blocks: every block straddles source shards (its amax is
// the max of the pieces' partial amaxes) and some straddle destinations.
// CHECK-LABEL: func.func @block
// CHECK: %{{.*}}, %{{.*}} = m2n.program %{{.*}} strategy = "hierarchical" {scaling = #m2n.scaling<block(4, 16)>}
// CHECK: m2n.rank 0 counters = 4 {
// Rank 0's columns 0-9: rows 0-3 in block (0, 0), rows 4-5 in block (1, 0).
// CHECK-NEXT: m2n.move vector amax src(0)+0 -> slots(0)+0 20B times 4 by (+20,+0) blocks 0+0/16 signal 0:0 step 0
// CHECK-NEXT: m2n.move vector amax src(0)+80 -> slots(0)+0 20B times 2 by (+20,+0) blocks 1+0/16 signal 0:0 step 0
// CHECK-NEXT: m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=6 step
// CHECK-NEXT: m2n.move vector reduce<max> slots(1)+0 -> quantizer(0)+0 4B
// CHECK: m2n.rank 4 counters
// Rank 4's rows 0-1 from rank 1 (columns 10-19, straddling blocks 0 and 1):
// phase 10 in a block of 16. Its scales last.
// CHECK: m2n.move vector copy src(1)+0 -> dst(4)+10 10B times 2 by (+20,+40) blocks 0+10/16
// CHECK: m2n.move vector scale holder(4)+0 -> scales(4)+0 12B
func.func @block(%c: !m2n.comm<8>, %w: !m2n.dist<6x40xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>)
    -> (!m2n.dist<6x40xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x3xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(4, 16)>} : !m2n.comm<8>, !m2n.dist<6x40xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<6x40xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x3xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>
  return %q, %s : !m2n.dist<6x40xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x3xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>
}

// MX into e5m2: one e8m0 scale per 32 elements of the last dimension, of
// a 3-D tensor whose rows each have their own scales (an entry stride of
// a table row per row).
// CHECK-LABEL: func.func @mx
// CHECK: m2n.move vector amax src(0)+0 -> slots(0)+0 {{.*}} blocks 0+0/32
// CHECK: m2n.move vector scale holder(2)+0 -> scales(2)+0
func.func @mx(%c: !m2n.comm<4>, %w: !m2n.dist<2x3x96xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)
    -> (!m2n.dist<2x3x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>, !m2n.dist<2x3x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<mx>} : !m2n.comm<4>, !m2n.dist<2x3x96xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<2x3x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>, !m2n.dist<2x3x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>
  return %q, %s : !m2n.dist<2x3x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>, !m2n.dist<2x3x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>
}

// One scale for a 1-D tensor of 1001 elements cut unevenly over 3 ranks
// and gathered on rank 3: every rank's amax reaches every table.
// CHECK-LABEL: func.func @tensor
// CHECK: m2n.move vector amax src(0)+0 -> slots(0)+0 668B blocks 0+0/
func.func @tensor(%c: !m2n.comm<4>, %w: !m2n.dist<1001xf16, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>>)
    -> (!m2n.dist<1001xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<tensor>} : !m2n.comm<4>, !m2n.dist<1001xf16, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>> -> !m2n.dist<1001xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>
  return %q, %s : !m2n.dist<1001xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>
}
