// RUN: m2n-opt %s --m2n-convert-to-gpu | FileCheck %s
// RUN: m2n-opt %s "--m2n-convert-to-gpu=chip=sm_100a features=+ptx88" | FileCheck %s --check-prefix=CHIP

// The transfer kernel: an elected thread, TMA bulk loads completing on
// mbarriers, TMA bulk stores and bulk reductions, acquire/release flags with
// a bounded wait that traps.
// CHECK: module attributes {gpu.container_module}
// The m2n IR stays as it was; the kernel module is added after it.
// CHECK: func.func @f
// CHECK: m2n.reshard
// CHECK: gpu.module @m2n_kernels [#nvvm.target<chip = "sm_90a", features = "+ptx86">]
// CHECK-DAG: llvm.mlir.global external @m2n_stages() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global internal @m2n_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<8 x i64>
// CHECK: gpu.func @m2n_transfer(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>) kernel
// The epoch lives on the device: read at the start, advanced by the last CTA.
// CHECK: llvm.load volatile
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// Held-back signals are released before a wait; an item whose load waits is
// loaded late, one whose store waits waits before its store.
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (i64, i64)
// CHECK: call @m2n_release
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: call @m2n_issue
// CHECK: call @m2n_wait
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}] : !llvm.ptr, <3>
// CHECK: nvvm.cp.async.bulk.tensor.reduce %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<max>}
// CHECK: nvvm.cp.async.bulk.global.shared.cta
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: call @m2n_release
// CHECK: llvm.atomicrmw add
// CHECK: llvm.store volatile
// CHECK: func.func private @m2n_release
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK: fence.proxy.async.global;
// CHECK: red.release.sys.global.add.u64
// CHECK: func.func private @m2n_issue
// CHECK: call @m2n_wait
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: func.func private @m2n_wait
// CHECK: ld.acquire.sys.global.u64
// CHECK: trap;

// CHIP: gpu.module @m2n_kernels [#nvvm.target<chip = "sm_100a", features = "+ptx88">]

func.func @f(%c: !m2n.comm<2>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
