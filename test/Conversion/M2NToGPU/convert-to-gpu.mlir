// m2n-convert-to-gpu builds the transfer kernel for the op codes the module's
// schedules use once lowered, records them as m2n.kernel_ops, and leaves the
// target to nvvm-attach-target. kernel-ops=all builds every path (the PTX
// assembles for sm_90a).
//
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-convert-to-gpu | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-convert-to-gpu | FileCheck %s --check-prefix=USED
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule "--m2n-convert-to-gpu=kernel-ops=all" | FileCheck %s --check-prefix=ALL
// RUN: m2n-opt %s "--pass-pipeline=builtin.module(m2n-plan-intersections,m2n-route-topology,m2n-lower-schedule,m2n-convert-to-gpu{kernel-ops=all},builtin.module(nvvm-attach-target{module=m2n_kernels chip=sm_90a features=+ptx86},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-nvvm-to-llvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa}))" | %extract_ptx - > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// RUN: not m2n-opt %s "--m2n-convert-to-gpu=kernel-ops=some" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=NOTLOWERED
// NOTLOWERED: error: the schedule is not lowered to per-rank programs: run m2n-lower-schedule first

// CHECK: module attributes {m2n.kernel_ops = {
// The m2n IR stays as it was; the kernel module is added after it, without
// a target, inside a module of its own (where the kernel's passes nest).
// CHECK: func.func @f
// CHECK: m2n.program
// CHECK: module @m2n_kernel {
// CHECK-NEXT: gpu.module @m2n_kernels {
// CHECK-DAG: llvm.mlir.global external @m2n_stages() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global internal @m2n_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<64 x i64>
// CHECK: func.func private @m2n_release
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
// CHECK: red.release.sys.global.add.u64
// CHECK: func.func private @m2n_wait
// CHECK: scf.while
// CHECK: ld.acquire.sys.global.u64
// CHECK: llvm.intr.trap
// The issue helper's last argument: the item's wait is met already (the
// walker met it before), so it does not poll.
// CHECK: func.func private @m2n_issue({{.*}}, %[[EARLY:.*]]: i1, %{{.*}}: i64, %[[MET:.*]]: i1)
// CHECK: arith.andi %[[EARLY]],
// CHECK: arith.xori %[[MET]],
// CHECK: call @m2n_wait
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// Zero-byte and vector items complete their stage's phase without bytes.
// CHECK: nvvm.mbarrier.arrive
// The walker's next item: its visit's template copied into the record ring
// in shared memory, the instance's strides added, the cursor advanced.
// CHECK: func.func private @m2n_next(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: !llvm.ptr<3>, %{{.*}}: !llvm.ptr<3>)
// CHECK-COUNT-8: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<2xi64>
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: arith.select
// The kernel's one table argument is the launch's walker records; each
// names its rank's templates, visits and epoch words and its place in the
// rank's grid (m2n/Artifact/KernelTable.h), so one launch runs many ranks.
// CHECK: gpu.func @m2n_transfer(%[[WALKERS:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) kernel
// CHECK: %[[RECORD:.*]] = llvm.getelementptr %[[WALKERS]]
// CHECK: %[[TEMPLATES:.*]] = llvm.getelementptr %[[RECORD]][16]
// CHECK: llvm.load %[[TEMPLATES]] : !llvm.ptr<1> -> !llvm.ptr<1>
// CHECK: llvm.getelementptr %[[RECORD]][24]
// CHECK: llvm.getelementptr %[[RECORD]][32]
// CHECK: llvm.getelementptr %[[RECORD]][40]
// CHECK: llvm.getelementptr %[[RECORD]][44]
// The epoch lives on the device: read at the start, advanced by the last
// of the rank's walkers.
// CHECK: llvm.load volatile
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: call @m2n_next
// CHECK: call @m2n_issue
// Held-back signals are released before a wait that may block (not one the
// walker met already: the last two loop values); an item whose load waits is
// loaded late, one whose store waits waits before its store. With vector
// items, the CTA reads each record after a barrier.
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (i64, i64, i64, i64, i64, i64)
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvvm.barrier0
// CHECK: call @m2n_release
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: call @m2n_issue
// CHECK: call @m2n_wait
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// Vector items: the whole CTA between two barriers.
// CHECK: nvvm.barrier0
// CHECK: nvvm.barrier0
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: call @m2n_next
// CHECK: call @m2n_release
// CHECK: llvm.atomicrmw add
// CHECK: llvm.store volatile

// @f: 8 f32 sharded over 2 ranks to replicated (16-byte runs: bulk copies),
// @g: an f32 max from partial (no TMA reduction: vector op 1 + 1 + 3 * 6).
// USED: m2n.kernel_ops = {bulk = array<i32: 0>, tile = array<i32>, vector = array<i32: 20>}
// USED-NOT: cp.reduce.async.bulk
// USED-NOT: nvvm.cp.async.bulk.tensor

// ALL: m2n.kernel_ops = {bulk = array<i32: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14>,
// ALL-SAME: vector = array<i32: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
// Casts: 28 + 5 * from + to between f32, f16, bf16, f8E4M3FN, f8E5M2.
// ALL-SAME: 29, 30, 31, 32, 33, 35, 36, 37, 38, 39, 41, 42, 43, 44, 45, 47, 48, 49, 50, 51,
// A quantizing reshard's items (docs/fp8-scaling.md): amax 53-55 (from f32,
// f16, bf16), scale 56-59, quantize 60-71 (from x fp8 type x e8m0 scales).
// ALL-SAME: 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71>

// Every bulk reduction, tiles of 1-5 dimensions, copies and reductions.
// PTX: .visible .entry m2n_transfer(
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// PTX-DAG: cvt.rn.satfinite.e4m3x2.f32
// PTX-DAG: cvt.rn.satfinite.e5m2x2.f32
// PTX-DAG: cvt.rn.f16x2.e4m3x2
// PTX-DAG: cvt.rn.f16x2.e5m2x2
// PTX-DAG: cvt.rn.bf16.f32
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f16
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.max.bf16
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.s32
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.max.s64
// PTX-DAG: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u64
// PTX-DAG: cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group
// PTX-DAG: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group
// PTX-DAG: cp.reduce.async.bulk.tensor.4d.global.shared::cta.max.tile.bulk_group
// PTX-DAG: cp.reduce.async.bulk.tensor.5d.global.shared::cta.min.tile.bulk_group
// The SM path: 16-byte vectors, f32 max as compare and select, 8-bit sums.
// PTX-DAG: ld.volatile.global.v4.b32
// PTX-DAG: st.global.v4.b32
// PTX-DAG: setp.lt.f32
// PTX-DAG: add.s16
// PTX-DAG: bar.sync 0;
// The kernel keeps everything in registers: no local-memory spills.
// PTX-NOT: ld.local
// PTX-NOT: st.local

// BAD: error: m2n-convert-to-gpu: kernel-ops must be 'used' or 'all', not 'some'

func.func @f(%c: !m2n.comm<2>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

func.func @g(%c: !m2n.comm<2>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
