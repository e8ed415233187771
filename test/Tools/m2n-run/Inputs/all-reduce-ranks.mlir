// Inputs of reduce-share-auto.test.
func.func @all_reduce_2(%c: !m2n.comm<2>, %x: !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
func.func @all_reduce_3(%c: !m2n.comm<3>, %x: !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[3]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<3>, !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[3]>, [partial<sum>]>> -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
  return
}
func.func @all_reduce_5(%c: !m2n.comm<5>, %x: !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[5]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<5>, !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[5]>, [partial<sum>]>> -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[5]>, [replicate]>>
  return
}
func.func @all_reduce_6(%c: !m2n.comm<6>, %x: !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[6]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<6>, !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[6]>, [partial<sum>]>> -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[6]>, [replicate]>>
  return
}
func.func @all_reduce_7(%c: !m2n.comm<7>, %x: !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[7]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<7>, !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[7]>, [partial<sum>]>> -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[7]>, [replicate]>>
  return
}
