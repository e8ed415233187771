func.func @handoff(%c: !m2n.comm<65536>, %x: !m2n.dist<32768x1024xf32, #m2n.layout<#m2n.mesh<[32768]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<65536>, !m2n.dist<32768x1024xf32, #m2n.layout<#m2n.mesh<[32768]>, [shard<0>]>> -> !m2n.dist<32768x1024xf32, #m2n.layout<#m2n.mesh<[32768], base = 32768>, [shard<0>]>>
  return
}
