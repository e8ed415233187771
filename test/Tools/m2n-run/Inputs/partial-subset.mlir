// Inputs of partial-subset.test: reshards and collectives that reduce some
// of the source's partial mesh axes and keep the others partial.

// DTensor's example: mesh axis 0 is reduced and scatters dim 1, axis 2 stays
// partial.
func.func @dtensor_example(%c: !m2n.comm<8>, %x: !m2n.dist<7x10xf32, #m2n.layout<#m2n.mesh<[2, 1, 4]>, [partial<sum>, shard<0>, partial<sum>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<7x10xf32, #m2n.layout<#m2n.mesh<[2, 1, 4]>, [partial<sum>, shard<0>, partial<sum>]>> -> !m2n.dist<7x10xf32, #m2n.layout<#m2n.mesh<[2, 1, 4]>, [shard<1>, shard<0>, partial<sum>]>>
  return
}
func.func @all_reduce_one_axis(%c: !m2n.comm<4>, %x: !m2n.dist<1000xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [1] : !m2n.comm<4>, !m2n.dist<1000xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, partial<sum>]>> -> !m2n.dist<1000xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, replicate]>>
  return
}
func.func @reduce_scatter_max_i16(%c: !m2n.comm<6>, %x: !m2n.dist<17xi16, #m2n.layout<#m2n.mesh<[2, 3]>, [partial<max>, partial<max>]>>) {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<6>, !m2n.dist<17xi16, #m2n.layout<#m2n.mesh<[2, 3]>, [partial<max>, partial<max>]>> -> !m2n.dist<17xi16, #m2n.layout<#m2n.mesh<[2, 3]>, [shard<0>, partial<max>]>>
  return
}
func.func @keep_middle_bf16(%c: !m2n.comm<8>, %x: !m2n.dist<5x3xbf16, #m2n.layout<#m2n.mesh<[2, 2, 2]>, [partial<sum>, partial<sum>, partial<sum>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<5x3xbf16, #m2n.layout<#m2n.mesh<[2, 2, 2]>, [partial<sum>, partial<sum>, partial<sum>]>> -> !m2n.dist<5x3xbf16, #m2n.layout<#m2n.mesh<[2, 2, 2]>, [replicate, partial<sum>, shard<0>]>>
  return
}
