func.func @two(%c: !m2n.comm<16777216>, %x: !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<16777216>, !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>> -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[1], base = 16777215>, [replicate]>>
  return
}
