// Inputs of u8.test: unsigned bytes, reduced and moved.
func.func @all_reduce_max_u8(%c: !m2n.comm<8>, %x: !m2n.dist<1001xui8, #m2n.layout<#m2n.mesh<[8]>, [partial<max>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<8>, !m2n.dist<1001xui8, #m2n.layout<#m2n.mesh<[8]>, [partial<max>]>> -> !m2n.dist<1001xui8, #m2n.layout<#m2n.mesh<[8]>, [replicate]>>
  return
}
func.func @reduce_scatter_sum_u8(%c: !m2n.comm<4>, %x: !m2n.dist<67x3xui8, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<4>, !m2n.dist<67x3xui8, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<67x3xui8, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return
}
func.func @min_u8(%c: !m2n.comm<2>, %x: !m2n.dist<300xui8, #m2n.layout<#m2n.mesh<[2]>, [partial<min>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<300xui8, #m2n.layout<#m2n.mesh<[2]>, [partial<min>]>> -> !m2n.dist<300xui8, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
func.func @bytes_to_columns(%c: !m2n.comm<4>, %x: !m2n.dist<9x33xui8, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<9x33xui8, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<9x33xui8, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>>
  return
}
