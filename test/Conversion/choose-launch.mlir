// m2n-choose-launch: the kernel's launch and every rank's are IR, written
// once, read by the artifact writer and the runtime as they are.
//
// RUN: m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-convert-to-gpu --m2n-choose-launch | FileCheck %s
// The options: one walker, smaller compiled stages, a CTA budget.
// RUN: m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-convert-to-gpu "--m2n-choose-launch=walkers=1 max-ctas=4" | FileCheck %s --check-prefix=ONE
// RUN: m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=stage-bytes=4096" --m2n-convert-to-gpu "--m2n-choose-launch=stage-bytes=4096" | FileCheck %s --check-prefix=SMALL
// What it refuses: moves larger than a stage, launches no kernel runs, a
// module without its kernel.
// RUN: not m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-convert-to-gpu "--m2n-choose-launch=stage-bytes=1024" 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-convert-to-gpu "--m2n-choose-launch=walkers=9" 2>&1 | FileCheck %s --check-prefix=WALKERS
// RUN: not m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-convert-to-gpu "--m2n-choose-launch=stages=4" 2>&1 | FileCheck %s --check-prefix=SHARED
// RUN: not m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-choose-launch 2>&1 | FileCheck %s --check-prefix=NOKERNEL
// The pipeline refuses the same options before any pass runs.
// RUN: not m2n-opt %s "--m2n-pipeline=walkers=0" 2>&1 | FileCheck %s --check-prefix=PIPELINE
// The chosen launches print, parse and verify again.
// RUN: m2n-opt %s --m2n-expand-collectives --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule --m2n-convert-to-gpu --m2n-choose-launch | m2n-opt | FileCheck %s

// CHECK: module attributes {{{.*}}m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 32, stages = 3, stage_bytes = 65536, walkers = 8>
// @small: 64-byte items, 8 walkers of 128-byte stages.
// CHECK-LABEL: func.func @small
// CHECK: m2n.rank 0 counters = {{[0-9]+}} launch <threads = 32, walkers = 8, stage_bytes = 128>
// @medium: 16 KiB items; four walkers of 3 x 16 KiB fit 3 x 64 KiB.
// CHECK-LABEL: func.func @medium
// CHECK: m2n.rank 0 counters = {{[0-9]+}} launch <threads = 32, walkers = 4, stage_bytes = 16384>
// @large: 64 KiB items take the compiled stage and one walker.
// CHECK-LABEL: func.func @large
// CHECK: m2n.rank 0 counters = {{[0-9]+}} launch <threads = 32, walkers = 1, stage_bytes = 65536>

// ONE: m2n.kernel_launch = #m2n.kernel_launch<ctas = 4, threads = 32, stages = 3, stage_bytes = 65536, walkers = 1>
// ONE-LABEL: func.func @small
// ONE: launch <threads = 32, walkers = 1, stage_bytes = 65536>
// ONE-LABEL: func.func @medium
// ONE: launch <threads = 32, walkers = 1, stage_bytes = 65536>

// Stages of 4 KiB: the 16 KiB runs split into 4 KiB items, one walker.
// SMALL: m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 32, stages = 3, stage_bytes = 4096, walkers = 8>
// SMALL-LABEL: func.func @small
// SMALL: launch <threads = 32, walkers = 8, stage_bytes = 128>
// SMALL-LABEL: func.func @medium
// SMALL: launch <threads = 32, walkers = 1, stage_bytes = 4096>

// LARGE: error: 'm2n.move' op moves 16384 bytes in one item, more than a stage of 1024: lower with m2n-lower-schedule{stage-bytes=1024}
// WALKERS: error: m2n-choose-launch: a kernel of 32 threads, 16 CTAs, 9 walkers and 3 stages of 65536 bytes: threads must be 32, 128 or 256, CTAs 1-65536, walkers 1-8, stages 1-64 and stage bytes a positive multiple of 16
// SHARED: error: m2n-choose-launch: 4 stages of 65536 bytes (each rounded up to 128) take 262144 bytes of shared memory, more than the 222592 a CTA may use
// NOKERNEL: error: m2n-choose-launch: no valid m2n.kernel_ops attribute: run m2n-convert-to-gpu first
// PIPELINE: m2n-pipeline: a kernel of 32 threads, 16 CTAs, 0 walkers

#lo = #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>
#rep = #m2n.layout<#m2n.mesh<[2]>, [replicate]>
func.func @small(%c: !m2n.comm<2>, %x: !m2n.dist<32xf32, #lo>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<32xf32, #lo> -> !m2n.dist<32xf32, #rep>
  return
}
func.func @medium(%c: !m2n.comm<2>, %x: !m2n.dist<8192xf32, #lo>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<8192xf32, #lo> -> !m2n.dist<8192xf32, #rep>
  return
}
func.func @large(%c: !m2n.comm<2>, %x: !m2n.dist<32768xf32, #lo>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<32768xf32, #lo> -> !m2n.dist<32768xf32, #rep>
  return
}
