// (fuse-reductions=false: the reductions below would otherwise read the
// rank's own partial themselves, leaving no copy to move.)
// copy-engine=true: a dependency-free source -> destination run of at least
// engine-min-bytes (a rank's own, or a peer's over NVLink) leaves the kernel
// for the copy engine, enqueued before the kernel on the executing rank's
// stream (adjacent chunks merged into one copy); the reductions onto it wait
// for nothing, since stream order puts the copy first. A peer whose source a
// copy reads learns it is read from a zero-byte item first in the reader's
// kernel (read-done). Runs below engine-min-bytes (1 MiB by default; each
// chunk of a chunked step counts alone) stay in the kernel. By default
// (copy-engine=auto) the cost model decides: these small runs stay in the
// kernel (TMA), a rank's own 64 MiB copy goes to the engine at 16, 32 and
// 64 CTAs a rank (weighed whole, though chunked into 4 MiB steps, each too
// small alone at 32 CTAs: the kernel's CTAs stop adding bandwidth at ~1,150
// GB/s, the engine moves 2,000), and stays in the kernel with
// copy-engine=false (AUTO, KERNEL).
//
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.engine.m2n copy-engine=true engine-min-bytes=0 chunk-bytes=4096 fuse-reductions=false" -o /dev/null
// RUN: m2n-artifact-dump %t.engine.m2n | FileCheck %s
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.16k.m2n copy-engine=true engine-min-bytes=16384 fuse-reductions=false" -o /dev/null
// RUN: m2n-artifact-dump %t.16k.m2n | FileCheck %s --check-prefix=MIN16K
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.default.m2n copy-engine=true chunk-bytes=4096 fuse-reductions=false" -o /dev/null
// RUN: m2n-artifact-dump %t.default.m2n | FileCheck %s --check-prefix=TMA
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.tma.m2n chunk-bytes=4096 fuse-reductions=false" -o /dev/null
// RUN: m2n-artifact-dump %t.tma.m2n | FileCheck %s --check-prefix=TMA
// RUN: m2n-run %s --pipeline="copy-engine=true engine-min-bytes=0 chunk-bytes=4096 fuse-reductions=false" | FileCheck %s --check-prefix=EXEC
// RUN: not m2n-opt %s "--m2n-pipeline=artifact=%t.bad.m2n copy-engine=true engine-min-bytes=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: m2n-opt %S/Inputs/own-copy-64mib.mlir "--m2n-pipeline=artifact=%t.auto16.m2n" -o /dev/null
// RUN: m2n-artifact-dump %t.auto16.m2n | FileCheck %s --check-prefix=AUTO
// RUN: m2n-opt %S/Inputs/own-copy-64mib.mlir "--m2n-pipeline=artifact=%t.auto32.m2n max-ctas=32" -o /dev/null
// RUN: m2n-artifact-dump %t.auto32.m2n | FileCheck %s --check-prefix=AUTO
// RUN: m2n-opt %S/Inputs/own-copy-64mib.mlir "--m2n-pipeline=artifact=%t.auto64.m2n max-ctas=64" -o /dev/null
// RUN: m2n-artifact-dump %t.auto64.m2n | FileCheck %s --check-prefix=AUTO
// RUN: m2n-opt %S/Inputs/own-copy-64mib.mlir "--m2n-pipeline=artifact=%t.off.m2n copy-engine=false" -o /dev/null
// RUN: m2n-artifact-dump %t.off.m2n | FileCheck %s --check-prefix=KERNEL
// RUN: not m2n-opt %s "--m2n-pipeline=artifact=%t.bad.m2n copy-engine=sometimes" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADVALUE

// CHECK-LABEL: reshard @all_reduce#0
// CHECK: rank 0: {{[0-9]+}} items, 0 network receives, 1 counters, 1 copy-engine copies
// CHECK-NEXT: engine copy src(0)+0 -> dst(0)+0 16384B
// CHECK-NEXT: item add.f32 src(1)+0 -> dst(0)+0 4096B read-done 1:0
// CHECK-LABEL: reshard @all_gather#1
// CHECK: rank 0: 2 items, 0 network receives, 1 counters, 2 copy-engine copies
// CHECK-NEXT: engine copy src(0)+0 -> dst(0)+0 8192B
// CHECK-NEXT: engine copy src(1)+0 -> dst(0)+8192 8192B
// CHECK-NEXT: item copy src(1)+0 -> src(1)+0 0B read-done 1:0
// CHECK-NEXT: item copy src(0)+0 -> src(0)+0 0B wait 0:0>=1
// CHECK: rank 1: 2 items, 0 network receives, 1 counters, 2 copy-engine copies
// CHECK-NEXT: engine copy src(0)+0 -> dst(1)+0 8192B
// CHECK-NEXT: engine copy src(1)+0 -> dst(1)+8192 8192B
// CHECK-NEXT: item copy src(0)+0 -> src(0)+0 0B read-done 0:0

// MIN16K-LABEL: reshard @all_reduce#0
// MIN16K: 1 copy-engine copies
// MIN16K-NEXT: engine copy src(0)+0 -> dst(0)+0 16384B
// MIN16K-LABEL: reshard @all_gather#1
// MIN16K-NOT: engine copy
// MIN16K: item copy src(1)+0 -> dst(0)+8192 8192B read-done 1:0

// TMA-NOT: engine copy
// TMA: item copy src(0)+0 -> dst(0)+0 4096B signal 0:0
// EXEC: 2 passed, 0 failed
// BAD: engine-min-bytes must not be negative
// AUTO: 1 copy-engine copies
// AUTO-NEXT: engine copy src(0)+0 -> dst(0)+0 67108864B
// KERNEL-NOT: engine copy
// KERNEL: item copy src(0)+0 -> dst(0)+0 65536B
// BADVALUE: Cannot find option named 'sometimes'

func.func @all_reduce(%c: !m2n.comm<2>, %x: !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

func.func @all_gather(%c: !m2n.comm<2>, %x: !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
