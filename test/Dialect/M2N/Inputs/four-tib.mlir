// A 2^40-element f32 tensor (4 TiB) handed from 2 ranks to 2 others: each
// 2 TiB transfer is cut into 1024 chunks of 2 GiB, not 2^19 of 4 MiB
// (route-topology.mlir checks this).
func.func @huge(%c: !m2n.comm<4>, %x: !m2n.dist<1099511627776xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<1099511627776xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<1099511627776xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
  return
}
