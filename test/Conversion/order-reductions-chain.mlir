// A hand-written schedule whose SM-path reductions onto one destination are
// ordered through a chain (step 2 waits for step 4, which waits for step 1)
// needs no direct dependency: --m2n-order-reductions leaves it as it is and
// the lowering takes it.
// RUN: m2n-opt %s --m2n-verify-schedule > %t.mlir
// RUN: m2n-opt %t.mlir --m2n-order-reductions | diff %t.mlir -
// RUN: m2n-opt %s --m2n-lower-schedule --m2n-verify-program | FileCheck %s
// CHECK: m2n.move vector reduce<sum> src(2)+0 -> dst(0)+0 12B
#mesh = #m2n.mesh<[3]>
#topology = #m2n.topology<domain_size = 3, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>
#layout = #m2n.layout<#mesh, [partial<sum>]>
#layout1 = #m2n.layout<#mesh, [replicate]>
module {
  func.func @sum3(%arg0: !m2n.comm<3>, %arg1: !m2n.dist<3xf32, #layout>) -> !m2n.dist<3xf32, #layout1> {
    %0 = m2n.schedule %arg1 on %arg0 strategy = "flat" topology(#topology) : !m2n.comm<3>, !m2n.dist<3xf32, #layout> -> !m2n.dist<3xf32, #layout1> {
      m2n.step 0 copy src(0) [0:3] -> dst(0) [0:3] via local
      m2n.step 1 reduce<sum> src(1) [0:3] -> dst(0) [0:3] via nvlink after [0]
      m2n.step 2 reduce<sum> src(2) [0:3] -> dst(0) [0:3] via nvlink after [0, 4]
      m2n.step 3 copy src(1) [0:3] -> dst(1) [0:3] via local
      m2n.step 4 reduce<sum> src(0) [0:3] -> dst(1) [0:3] via nvlink after [3, 1]
      m2n.step 5 reduce<sum> src(2) [0:3] -> dst(1) [0:3] via nvlink after [3, 4]
      m2n.step 6 copy src(2) [0:3] -> dst(2) [0:3] via local
      m2n.step 7 reduce<sum> src(0) [0:3] -> dst(2) [0:3] via nvlink after [6]
      m2n.step 8 reduce<sum> src(1) [0:3] -> dst(2) [0:3] via nvlink after [6, 7]
    }
    return %0 : !m2n.dist<3xf32, #layout1>
  }
}
