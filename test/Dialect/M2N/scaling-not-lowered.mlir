// A quantizing reshard is planned (plan-intersections-scaling.mlir) and
// routed (route-topology-scaling.mlir), but the program level does not
// carry its amax exchange yet (docs/fp8-scaling.md, status): the pipeline
// and the lowering stop with a diagnostic instead of compiling a reshard
// without its scales. The MX
// scales themselves move as data (f8E8M0FNU bytes) like any tensor.
// RUN: m2n-opt %s --split-input-file --m2n-pipeline --verify-diagnostics
// RUN: not m2n-opt %s --m2n-plan-intersections --m2n-route-topology --m2n-lower-schedule 2>&1 | FileCheck %s --check-prefix=LOWER
// LOWER: error: 'm2n.schedule' op with scaling block(128, 128): the program level does not carry the amax exchange of a quantizing schedule yet (docs/fp8-scaling.md, status)
// RUN: m2n-sim %S/Inputs/e8m0-scales.mlir | FileCheck %s --check-prefix=SIM
// SIM: m2n-sim: PASS: 1 plan, 8 transfers, 32 destination elements checked

func.func @block(%c: !m2n.comm<4>, %w: !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>)
    -> (!m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op with scaling block(128, 128): the pipeline does not lower the amax exchange of a quantizing reshard yet (docs/fp8-scaling.md, status)}}
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<4>, !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
  return %q, %s : !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
}
