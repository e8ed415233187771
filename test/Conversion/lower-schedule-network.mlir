// --m2n-stage-network-steps --m2n-order-reductions --m2n-order-steps --m2n-lower-schedule on two domains (test/GPU/split-by-gpu.json: even and
// odd ranks): network steps become NCCL receives, which only copy, one per
// network step: a box strided in its source is packed into staging on the
// sender first, one strided in its target (or reduced into it) lands in
// staging on the receiver and is unpacked from there.
//
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=gather-bcast topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-stage-network-steps --m2n-order-reductions --m2n-order-steps --m2n-lower-schedule | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=gather-bcast topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-stage-network-steps --m2n-order-reductions --m2n-order-steps --m2n-lower-schedule | m2n-opt | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=flat topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-stage-network-steps --m2n-order-reductions --m2n-order-steps --m2n-lower-schedule --mlir-print-local-scope | FileCheck %s --check-prefix=PACK
// Lowered unstaged, a network step that NCCL cannot take whole is refused by name.
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=gather-bcast topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-lower-schedule 2>&1 | FileCheck %s --check-prefix=UNSTAGED
// UNSTAGED: error: cannot lower the schedule to per-rank programs: step 1 (max src(1) [0:16] -> scratch0(0) [0:16] via network after [0]) is not one contiguous copy between whole NCCL buffers: stage it first (m2n-stage-network-steps)
// RUN: m2n-run %s "--pipeline=strategy=gather-bcast topology=%m2n_src_root/test/GPU/split-by-gpu.json" | FileCheck %s --check-prefix=RESULT
// RUN: m2n-run %s "--pipeline=strategy=flat topology=%m2n_src_root/test/GPU/split-by-gpu.json buffer-align=4" | FileCheck %s --check-prefix=RESULT
// RUN: m2n-run %s "--pipeline=topology=%m2n_src_root/test/GPU/split-by-gpu.json" | FileCheck %s --check-prefix=RESULT
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=gather-bcast topology=%m2n_src_root/test/GPU/split-by-gpu.json" --m2n-stage-network-steps --m2n-order-reductions --m2n-order-steps --m2n-lower-schedule | %python -c "import sys; print(sys.stdin.read().replace('network copy', 'network reduce<max>', 1))" | not m2n-opt --m2n-verify-program 2>&1 | FileCheck %s --check-prefix=REDUCE

// A max over four ranks gathered to rank 0 by gather-bcast: the
// contributions of ranks 1 and 3 cross the network. They land in staging
// buffers on rank 0 (network copies, each the step right before its
// reduction: step order stays topological, the order in which the runtime
// posts network steps) and are reduced from there, each after
// its receive (here through a join item: a move waits for at most two
// counters); the reductions stay on the SM path (no TMA f32 max), ordered.
// CHECK-LABEL: func.func @max
// CHECK: m2n.scratch 4 on 0 [16]
// CHECK: m2n.rank 0 counters =
// CHECK-NEXT: m2n.move network copy src(1)+0 -> scratch4(0)+0 64B signal 0:1 step 1
// CHECK-NEXT: m2n.move network copy src(3)+0 -> scratch5(0)+0 64B signal 0:5 step 4
// CHECK: m2n.move bulk copy scratch0(0)+0 -> scratch0(0)+0 0B signal 0:3 wait 0:0>=1 wait 0:1>=1
// CHECK-NEXT: m2n.move vector reduce<max> scratch4(0)+0 -> scratch0(0)+0 64B signal 0:4 wait 0:2>=1 wait 0:3>=1 step 3
// CHECK-NOT: m2n.move network reduce
func.func @max(%c: !m2n.comm<4>, %x: !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>> -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// An odd f64 box (5x3) reduced across the domains into two shards.
// CHECK-LABEL: func.func @max_f64_rows
// CHECK-NOT: m2n.move network reduce
func.func @max_f64_rows(%c: !m2n.comm<4>, %x: !m2n.dist<5x3xf64, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<5x3xf64, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>> -> !m2n.dist<5x3xf64, #m2n.layout<#m2n.mesh<[2], base = 1>, [shard<0>]>>
  return
}

// Row shards to column shards: each 4x4 box is strided in its source (rows
// of 4 of 8 columns): a tile packs it into staging on the sender, and one
// network copy of 64 bytes moves it (not one per row).
// PACK-LABEL: func.func @columns
// PACK-DAG: m2n.scratch 0 on 1 [4, 4]
// PACK-DAG: m2n.scratch 1 on 0 [4, 4]
// PACK: m2n.rank 0
// PACK-NEXT: m2n.move tile copy src(0) map 0 (0, 4) -> scratch1(0) map 4 (0, 0) 64B signal 0:0
// PACK: m2n.rank 3
// PACK-NEXT: m2n.move network copy scratch1(0)+0 -> dst(3)+0 64B wait 0:0>=1
func.func @columns(%c: !m2n.comm<4>, %x: !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>>
  return
}

// The reverse: contiguous in the source, strided in the target; one network
// copy into staging on the receiver, then a tile unpacks it.
// PACK-LABEL: func.func @rows
// PACK: m2n.rank 3
// PACK-NEXT: m2n.move network copy src(0)+64 -> scratch1(3)+0 64B signal 3:0
// PACK-NEXT: m2n.move tile copy scratch1(3) map 3 (0, 0) -> dst(3) map 4 (0, 0) 64B wait 3:0>=1
func.func @rows(%c: !m2n.comm<4>, %x: !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
  return
}

// RESULT: 4 passed, 0 failed
// REDUCE: error: 'm2n.move' op a network receive reduces, but NCCL receives only copy (receive into staging, then reduce)
