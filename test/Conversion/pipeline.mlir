// The named pipeline takes the paper's Example A from layouts to routed
// schedules, per-rank programs and the PTX of the transfer kernel; the PTX
// assembles for sm_90a.
//
// RUN: m2n-opt %m2n_src_root/examples/example_a.mlir --m2n-pipeline --mlir-print-local-scope | FileCheck %s --check-prefix=IR
// RUN: m2n-opt %m2n_src_root/examples/example_a.mlir --m2n-pipeline | %extract_ptx - | FileCheck %s --check-prefix=PTX
// RUN: m2n-opt %m2n_src_root/examples/example_a.mlir --m2n-pipeline | %extract_ptx - | FileCheck %s --check-prefix=SYNC
// RUN: m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=fuse-reductions=true" --mlir-print-local-scope | FileCheck %s --check-prefix=FUSED
// RUN: m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=max-ctas=64" --mlir-print-local-scope | FileCheck %s --check-prefix=FUSED64
// RUN: m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=fuse-reductions=true" | %extract_ptx - | FileCheck %s --check-prefix=FUSED-PTX
// RUN: %if ptxas %{ m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=fuse-reductions=true" | %extract_ptx - > %t.fused.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.fused.ptx -o %t.fused.cubin %}
// RUN: m2n-opt %m2n_src_root/examples/example_a.mlir --m2n-pipeline | %extract_ptx - | not grep -E "bulk_group\.(add\.f32|add\.f64|add\.noftz\.f16|min|max|add\.s32|add\.u64)|cp\.async\.bulk\.tensor"
// RUN: m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=strategy=flat chunk-bytes=1024" --mlir-print-local-scope | FileCheck %s --check-prefix=FLAT
// RUN: not m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=CHIP-NAME
// RUN: %if ptxas %{ m2n-opt %m2n_src_root/examples/example_a.mlir --m2n-pipeline | %extract_ptx - > %t.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}

// CHIP: m2n-pipeline: chip=sm_80: the transfer kernel needs TMA (cp.async.bulk, mbarrier transactions), sm_90 (Hopper) or newer, e.g. chip=sm_90a
// CHIP-NAME: m2n-pipeline: chip=gfx90a: the transfer kernel needs TMA
// RUN: not m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=scale-bands=0" 2>&1 | FileCheck %s --check-prefix=BANDS
// RUN: not m2n-opt %m2n_src_root/examples/example_a.mlir "--m2n-pipeline=scale-bands=9" 2>&1 | FileCheck %s --check-prefix=BANDS
// BANDS: m2n-pipeline: scale-bands={{0|9}}: expected 1 to 8

// The kernel's launch and every rank's are decided in IR (m2n-choose-launch):
// 16-byte items on rank 4 run 8 walkers of 128-byte stages.
// IR: module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 32, stages = 3, stage_bytes = 65536, walkers = 8>, m2n.kernel_ops = {bulk = array<i32: 0, 3>, tile = array<i32>, vector = array<i32>}
// Fused (fuse-reductions=true, or auto at max-ctas=64), Example A's bf16
// sums read each rank's own partial as their accumulator: vector adds (op
// 16), whose kernel has 256 threads.
// FUSED: module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 256, stages = 3, stage_bytes = 65536, walkers = 8>, m2n.kernel_ops = {bulk = array<i32: 0>, tile = array<i32>, vector = array<i32: 16>}
// FUSED64: module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 64, threads = 256, {{.*}}vector = array<i32: 16>}
// Each distinct reshard is one m2n.reshard_fn that its tensors call.
// IR-LABEL: func.func @example_a
// IR: m2n.call @[[A:reshard_[0-9]+]](%{{.*}}) on %{{.*}}
// IR-LABEL: func.func @refit_after_allreduce
// IR: m2n.call @[[B:reshard_[0-9]+]]
// IR: m2n.call @[[C:reshard_[0-9]+]]
// IR-NOT: m2n.reshard %
// IR-NOT: m2n.all_reduce
// IR: m2n.reshard_fn @[[A]] {
// IR: m2n.program %{{.*}} on %{{.*}} strategy = "hierarchical"
// IR-NEXT: m2n.rank 4 counters = 2 launch <threads = 32, walkers = 8, stage_bytes = 128> {
// IR-NEXT: m2n.move network copy src(0)+0 -> dst(4)+0 16B signal 4:0 step 0
// IR: m2n.yield
// IR: m2n.reshard_fn @[[B]] {
// IR: m2n.program
// IR: m2n.reshard_fn @[[C]] {
// IR: m2n.program
// IR: gpu.binary @m2n_kernels [#gpu.object<#nvvm.target<chip = "sm_90a", features = "+ptx86">

// FLAT: m2n.reshard_fn @reshard_1 {
// FLAT: m2n.program %{{.*}} strategy = "flat"

// PTX: .version 8.6
// PTX: .target sm_90a
// PTX: .extern .shared .align 128 .b8 m2n_stages[];
// PTX: .visible .entry m2n_transfer(
// PTX: mbarrier.init.shared.b64
// PTX: fence.mbarrier_init.release.cluster;
// PTX: mbarrier.arrive.expect_tx.shared.b64
// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX: mbarrier.try_wait.parity.shared.b64
// PTX: cp.async.bulk.global.shared::cta.bulk_group
// The kernel is specialized: Example A's reductions are bf16 sums, so it
// has that bulk reduction and no other; fused, that vector reduction
// (packed adds, one rounding).
// PTX: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16
// FUSED-PTX: add.rn.bf16x2
// SYNC-DAG: cp.async.bulk.commit_group;
// SYNC-DAG: red.release.sys.global.add.u64
// SYNC-DAG: cp.async.bulk.wait_group.read 0;
// SYNC-DAG: cp.async.bulk.wait_group.read 1;
// SYNC-DAG: cp.async.bulk.wait_group 0;
// The kernel keeps everything in registers: no local-memory spills.
// PTX-NOT: ld.local
// PTX-NOT: st.local
