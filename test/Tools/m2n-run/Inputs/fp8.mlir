// Inputs of fp8.test.
func.func @gather_e4m3(%c: !m2n.comm<4>, %x: !m2n.dist<4096xf8E4M3FN, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<4096xf8E4M3FN, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4096xf8E4M3FN, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}
func.func @odd_e5m2(%c: !m2n.comm<4>, %x: !m2n.dist<7x13xf8E5M2, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<7x13xf8E5M2, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<7x13xf8E5M2, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>>
  return
}
func.func @to_columns_e4m3(%c: !m2n.comm<2>, %x: !m2n.dist<64x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<2>, !m2n.dist<64x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<64x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}
