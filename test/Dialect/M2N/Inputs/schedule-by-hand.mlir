// A reshard written at the schedule level (outline-reshards.mlir runs it).
#src = #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>
#dst = #m2n.layout<#m2n.mesh<[2], base = 2>, [replicate]>
func.func @by_hand(%c: !m2n.comm<4>, %a: !m2n.dist<8xf32, #src>) {
  %0 = m2n.schedule %a on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2, 3]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst> {
    m2n.step 0 copy src(0) [0:4] -> dst(2) [0:4] via nvlink
    m2n.step 1 copy src(1) [0:4] -> dst(2) [4:8] via nvlink
    m2n.step 2 copy src(0) [0:4] -> dst(3) [0:4] via nvlink
    m2n.step 3 copy src(1) [0:4] -> dst(3) [4:8] via nvlink
  }
  return
}
