// A quantizing reshard is planned (plan-intersections-scaling.mlir),
// routed (route-topology-scaling.mlir) and lowered to the program level
// (test/Conversion/lower-schedule-scaling.mlir), but the transfer kernel
// does not compute its amaxes and scales yet (docs/fp8-scaling.md,
// status): the pipeline and the kernel's generator stop with a diagnostic
// instead of compiling a reshard without its scales. The MX scales
// themselves move as data (f8E8M0FNU bytes) like any tensor.
// RUN: m2n-opt %s --split-input-file --m2n-pipeline --verify-diagnostics
// RUN: not m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-order-reductions --m2n-lower-schedule --m2n-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=KERNEL
// KERNEL: error: a quantizing reshard's program (scaling block(128, 128)) has amax, scale and quantizing moves, which the transfer kernel and the artifact do not carry yet (docs/fp8-scaling.md, status)
// RUN: m2n-sim %S/Inputs/e8m0-scales.mlir | FileCheck %s --check-prefix=SIM
// SIM: m2n-sim: PASS: 1 plan, 8 transfers, 32 destination elements checked

func.func @block(%c: !m2n.comm<4>, %w: !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>)
    -> (!m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op with scaling block(128, 128): the transfer kernel does not compute a quantizing reshard's amaxes and scales yet (its program runs on the host: m2n-sim; docs/fp8-scaling.md, status)}}
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<4>, !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
  return %q, %s : !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
}
