// --m2n-lower-schedule: each m2n.schedule becomes an m2n.program whose moves
// carry the mechanism the cost rule picked (docs/codegen.md), at each
// threshold; the program level prints, parses back and verifies.
//
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule | m2n-opt | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=fuse-reductions=true" | FileCheck %s --check-prefix=FUSED
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=fuse-reductions=true" | m2n-opt --m2n-verify-program | FileCheck %s --check-prefix=FUSED
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=fuse-reductions=auto kernel-ctas=64" | FileCheck %s --check-prefix=FUSED
// RUN: m2n-run %s "--pipeline=fuse-reductions=true" | FileCheck %s --check-prefix=RESULT
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=tile-below-run-bytes=0" | FileCheck %s --check-prefix=NOTILES
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=tile-below-run-bytes=0" | m2n-opt | FileCheck %s --check-prefix=NOTILES
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=vector-below-bytes=512" | FileCheck %s --check-prefix=VEC512
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=copy-engine=true engine-min-bytes=128" | FileCheck %s --check-prefix=ENGINE
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=stage-bytes=64" | FileCheck %s --check-prefix=STAGE64
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=buffer-align=8" | FileCheck %s --check-prefix=ALIGN8
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=buffer-align=8" | m2n-opt | FileCheck %s --check-prefix=ALIGN8
// RUN: m2n-run %s "--pipeline=buffer-align=2" | FileCheck %s --check-prefix=RESULT
// RUN: not m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=buffer-align=12" 2>&1 | FileCheck %s --check-prefix=BADALIGN
// RUN: not m2n-opt %s "--m2n-pipeline=buffer-align=8192" 2>&1 | FileCheck %s --check-prefix=BIGALIGN
// RUN: not m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=vector-below-bytes=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not m2n-opt %s --m2n-plan-intersections --m2n-route-topology "--m2n-lower-schedule=stage-bytes=24" 2>&1 | FileCheck %s --check-prefix=BADSTAGE

// An aligned 256-byte run per rank: TMA bulk; the copy engine at
// engine-min-bytes <= 128 takes the dependency-free copies from sources.
// CHECK-LABEL: func.func @gather
// CHECK: m2n.program %{{.*}} on %{{.*}} strategy = "hierarchical"
// CHECK-NEXT: m2n.rank 0 counters = 1 {
// CHECK-NEXT: m2n.move bulk copy src(0)+0 -> dst(0)+0 128B step 0
// CHECK-NEXT: m2n.move bulk copy src(1)+0 -> dst(0)+128 128B read_done 1:0 step 3
// CHECK-NEXT: m2n.move bulk copy src(0)+0 -> src(0)+0 0B wait 0:0>=1
// ENGINE-LABEL: func.func @gather
// ENGINE: m2n.rank 0 counters = 1 {
// ENGINE-NEXT: m2n.move engine copy src(0)+0 -> dst(0)+0 128B step 0
// ENGINE-NEXT: m2n.move engine copy src(1)+0 -> dst(0)+128 128B step 3
// ENGINE-NEXT: m2n.move bulk copy src(1)+0 -> src(1)+0 0B read_done 1:0
// Buffers promised only 8-byte alignment (buffer-align=8): TMA cannot know
// where their 16-byte boundaries are, so every move of a caller buffer is a
// vector move (the program records the promise).
// ALIGN8-LABEL: func.func @gather
// ALIGN8: m2n.program %{{.*}} strategy = "hierarchical" buffer_alignment = 8 :
// ALIGN8-NEXT: m2n.rank 0 counters = 1 {
// ALIGN8-NEXT: m2n.move vector copy src(0)+0 -> dst(0)+0 128B step 0
// ALIGN8-NEXT: m2n.move vector copy src(1)+0 -> dst(0)+128 128B read_done 1:0 step 3
// STAGE64-LABEL: func.func @gather
// STAGE64: m2n.move bulk copy src(0)+0 -> dst(0)+0 64B times 2 by (+64,+64) step 0
// STAGE64-NEXT: m2n.move bulk copy src(1)+0 -> dst(0)+128 64B times 2 by (+64,+64) read_done 1:0 step 3
func.func @gather(%c: !m2n.comm<2>, %x: !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

// 64-byte rows of a 2-D box: tiles below tile-below-run-bytes (through
// tensor maps over both buffers); without tiles, one bulk move repeated
// over the rows.
// ALIGN8-LABEL: func.func @columns
// ALIGN8-NOT: m2n.tensor_map
// ALIGN8: m2n.move vector copy src(0)+0 -> dst(0)+0 64B times 8 by (+64,+128) step 0
// ALIGN8-NEXT: m2n.move vector copy src(1)+0 -> dst(0)+64 64B times 8 by (+64,+128) read_done 1:0 step 3
// CHECK-LABEL: func.func @columns
// CHECK: m2n.tensor_map 0 of src(0) [8, 16] box [8, 16]
// CHECK: m2n.tensor_map 1 of dst(0) [8, 32] box [8, 16]
// CHECK: m2n.move tile copy src(0) map 0 (0, 0) -> dst(0) map 1 (0, 0) 512B step 0
// NOTILES-LABEL: func.func @columns
// NOTILES-NOT: m2n.tensor_map
// A step's rows are one move, repeated: 8 rows of 64 bytes, each 64 bytes
// further in the source and 128 in the destination.
// NOTILES: m2n.move bulk copy src(0)+0 -> dst(0)+0 64B times 8 by (+64,+128) step 0
// NOTILES-NEXT: m2n.move bulk copy src(1)+0 -> dst(0)+64 64B times 8 by (+64,+128) read_done 1:0 step 3
func.func @columns(%c: !m2n.comm<2>, %x: !m2n.dist<8x32xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<8x32xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<8x32xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

// 125 f32 per rank (500 bytes): the own part is an aligned bulk body and a
// 4-byte SM tail; the peer's lands 500 bytes in, misaligned against its
// source modulo 16, so it moves on the SM path whole. With
// vector-below-bytes=512 the 496-byte body stays on the SM path too.
// CHECK-LABEL: func.func @odd
// CHECK: m2n.move bulk copy src(0)+0 -> dst(0)+0 496B step 0
// CHECK-NEXT: m2n.move vector copy src(0)+496 -> dst(0)+496 4B step 0
// CHECK-NEXT: m2n.move vector copy src(1)+0 -> dst(0)+500 500B read_done 1:0 step 3
// VEC512-LABEL: func.func @odd
// VEC512: m2n.move vector copy src(0)+0 -> dst(0)+0 500B step 0
func.func @odd(%c: !m2n.comm<2>, %x: !m2n.dist<250xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<250xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<250xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

// A max reduction TMA has no f32 form for: the SM path. Fused
// (fuse-reductions=true, or auto for kernels of at least 48 CTAs a rank),
// the rank's copy of its own partial is not a move of its own: the
// reduction reads that partial as its accumulator.
// CHECK-LABEL: func.func @max
// CHECK: m2n.move vector reduce<max> src(1)+0 -> dst(0)+0 64B wait 0:0>=1 read_done 1:1 step 3
// FUSED-LABEL: func.func @max
// FUSED: m2n.rank 0 counters = 1 {
// FUSED-NEXT: m2n.move vector reduce<max> src(1)+0 -> dst(0)+0 64B acc src(0) read_done 1:0 step 3
// FUSED-NEXT: m2n.move bulk copy src(0)+0 -> src(0)+0 0B wait 0:0>=1
func.func @max(%c: !m2n.comm<2>, %x: !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>> -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

// NEGATIVE: error: m2n-lower-schedule: tile-below-run-bytes, vector-below-bytes and engine-min-bytes must not be negative
// BADSTAGE: error: cannot lower the schedule to per-rank programs: the item size must be a positive multiple of 16

// RESULT: {{[0-9]+}} passed, 0 failed
// BIGALIGN: m2n-pipeline: buffer-align=8192: the buffer alignment 8192 is not a power of two of at most 4096 bytes
// BADALIGN: error: m2n-lower-schedule: buffer-align: the buffer alignment 12 is not a power of two of at most 4096 bytes
