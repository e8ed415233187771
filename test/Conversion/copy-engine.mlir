// copy-engine=true: each rank's own source -> destination copy leaves the
// kernel for the copy engine, enqueued before the kernel on the rank's
// stream (adjacent chunks merged into one copy); the reductions onto it wait
// for nothing, since stream order puts the copy first. Off by default.
//
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.engine.m2n copy-engine=true chunk-bytes=4096" -o /dev/null
// RUN: m2n-artifact-dump %t.engine.m2n | FileCheck %s
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.tma.m2n chunk-bytes=4096" -o /dev/null
// RUN: m2n-artifact-dump %t.tma.m2n | FileCheck %s --check-prefix=TMA
// RUN: m2n-run %s --pipeline="copy-engine=true chunk-bytes=4096" | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: reshard @all_reduce#0
// CHECK: rank 0: {{[0-9]+}} items, 0 network receives, 1 counters, 1 copy-engine copies
// CHECK-NEXT: engine copy src(0)+0 -> dst(0)+0 16384B
// CHECK-NEXT: item add.f32 src(1)+0 -> dst(0)+0 4096B read-done 1:0
// CHECK-LABEL: reshard @all_gather#1
// CHECK: rank 1: 3 items, 0 network receives, 1 counters, 1 copy-engine copies
// CHECK-NEXT: engine copy src(1)+0 -> dst(1)+8192 8192B
// CHECK-NEXT: item copy src(0)+0 -> dst(1)+0 4096B read-done 0:0
// TMA-NOT: engine copy
// TMA: item copy src(0)+0 -> dst(0)+0 4096B signal 0:0
// EXEC: 2 passed, 0 failed

func.func @all_reduce(%c: !m2n.comm<2>, %x: !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

func.func @all_gather(%c: !m2n.comm<2>, %x: !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
